import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.leaderboard import (
    Entry,
    leaderboard,
    paper_markdown,
    paper_tables,
    read_run_dir,
    read_tracking,
    rich_tables,
)
from rankuq.bench.tracking import mlflow_name
from rankuq.errors import RankuqError


def test_leaderboard_is_mean_and_sample_std_over_seeds():
    results = pd.DataFrame(
        {
            "condition": ["c"] * 3,
            "method": ["bert", "bert", "bm25"],
            "R@1": [0.2, 0.4, 0.5],
            "ECE": [0.1, 0.3, np.nan],
        }
    )
    board = leaderboard(results, {("c", "bm25"): {"R@1": 0.04}}, baseline="bert")
    assert board.seeds.tolist() == [2, 1]
    assert board.baseline.tolist() == [True, False]
    assert board["R@1"].tolist() == pytest.approx([0.3, 0.5])
    assert board["R@1 std"].tolist() == pytest.approx([2**0.5 * 0.1, 0.0])
    assert np.isnan(board["R@1 p"].iloc[0]) and board["R@1 p"].iloc[1] == 0.04
    assert np.isnan(board["ECE p"]).all() and np.isnan(board["ECE"].iloc[1])


def test_mlflow_names_hold_no_at_sign_or_space():
    assert mlflow_name("nDCG@10 std") == "nDCG_at_10_std"
    assert mlflow_name("nAUC AP u_max p") == "nAUC_AP_u_max_p"


def test_paper_tables_give_relative_changes_and_marks_in_the_metrics_direction(run_dir):
    tables = paper_tables(read_run_dir(run_dir).table)
    assert list(tables) == ["wikiqa", "clariq-to-wikiqa"]
    wikiqa, clariq = tables["wikiqa"], tables["clariq-to-wikiqa"]
    assert list(wikiqa.index) == ["bm25", "bert (baseline)", "ensemble"]
    assert list(wikiqa.columns) == ["seeds", "R@1", "ECE", "nAUC AP u_max"]
    assert wikiqa.loc["ensemble", "R@1"] == Entry("0.440 ± 0.020", "+10.00%", "†", best=True)
    # ECE: lower is better, so a significant drop is an improvement.
    assert wikiqa.loc["ensemble", "ECE"] == Entry("0.150 ± 0.005", "-25.00%", "†", best=True)
    assert wikiqa.loc["ensemble", "nAUC AP u_max"] == Entry("0.330 ± 0.010", "+10.00%", "", best=True)
    assert wikiqa.loc["bm25", "R@1"] == Entry("0.380 ± 0.000", "-5.00%")
    assert wikiqa.loc["bm25", "ECE"] == Entry("—")
    assert wikiqa.loc["bert (baseline)", "R@1"] == Entry("0.400 ± 0.050")
    assert clariq.loc["bm25", "R@1"] == Entry("0.300 ± 0.000", "+20.00%", "†", best=True)
    assert clariq.loc["ensemble", "R@1"] == Entry("0.200 ± 0.030", "-20.00%", "‡")
    assert clariq.loc["ensemble", "ECE"] == Entry("0.125 ± 0.010", "+25.00%", "‡")
    assert clariq.loc["bert (baseline)", "ECE"].best
    # A tie on the shown value makes both best; no p-value, no mark.
    assert clariq.loc["ensemble", "nAUC AP u_max"] == Entry("0.200 ± 0.030", "+0.00%", "", best=True)
    assert clariq.loc["bert (baseline)", "nAUC AP u_max"].best


def test_a_condition_without_a_baseline_row_shows_no_changes(run_dir):
    table = read_run_dir(run_dir).table
    table.loc[table.condition == "wikiqa", "baseline"] = False
    wikiqa = paper_tables(table)["wikiqa"]
    assert wikiqa.loc["ensemble", "R@1"] == Entry("0.440 ± 0.020", best=True)
    assert paper_tables(table)["clariq-to-wikiqa"].loc["bm25", "R@1"].change == "+20.00%"


def test_markdown_has_a_table_per_condition_bold_best_and_the_rule(run_dir):
    text = paper_markdown(read_run_dir(run_dir))
    assert text.startswith("# Leaderboard: my-grid\n\n## wikiqa\n\n| method ")
    assert "## clariq-to-wikiqa" in text
    assert "| ensemble        |       2 | **0.440 ± 0.020** (+10.00% †) " in text
    assert "| bm25            |       2 | 0.380 ± 0.000 (-5.00%)" in text
    assert "p < 0.05" in text and "lower is better for ECE;" in text


def test_rich_tables_print_one_table_per_condition(run_dir):
    tables = rich_tables(read_run_dir(run_dir))
    assert [t.title for t in tables] == ["my-grid: wikiqa", "my-grid: clariq-to-wikiqa"]
    assert [c.header for c in tables[0].columns] == ["method", "seeds", "R@1", "ECE", "nAUC AP u_max"]
    ensemble_r1 = tables[0].columns[2]._cells[2]
    assert ensemble_r1.plain == "0.440 ± 0.020 (+10.00% †)" and ensemble_r1.spans[0].style == "bold"


def test_rich_tables_split_the_metrics_to_fit_a_narrow_terminal(run_dir):
    tables = rich_tables(read_run_dir(run_dir), width=90)  # (90 − 30) // 28 = 2 metrics a table
    headers = [[c.header for c in t.columns][2:] for t in tables]
    assert headers == [["R@1", "ECE"], ["nAUC AP u_max"]] * 2
    assert [t.title for t in tables][1] == "my-grid: wikiqa"


def test_read_run_dir_reads_the_plot_index(run_dir):
    board = read_run_dir(run_dir)
    assert len(board.plots) == 8 and all(plot.path.is_file() for plot in board.plots)
    assert board.plots[0].kind == "reliability" and board.plots[0].condition == "wikiqa"


def test_a_run_dir_without_leaderboard_says_to_run_first(tmp_path):
    with pytest.raises(RankuqError, match=rf"{tmp_path / 'leaderboard.csv'} not found: run `rankuq run"):
        read_run_dir(tmp_path)


@pytest.mark.parametrize(
    ("drop", "message"),
    [("baseline", r"missing columns \['baseline'\]"), ("ECE p", r"missing columns \['ECE p'\]")],
)
def test_a_leaderboard_with_missing_columns_is_named(run_dir, drop, message):
    csv = run_dir / "leaderboard.csv"
    pd.read_csv(csv).drop(columns=drop).to_csv(csv, index=False)
    with pytest.raises(RankuqError, match=rf"leaderboard.csv: {message}; rewrite it with `rankuq run`"):
        read_run_dir(run_dir)


def test_two_baselines_in_a_condition_are_an_error(run_dir):
    csv = run_dir / "leaderboard.csv"
    board = pd.read_csv(csv)
    board.loc[0, "baseline"] = True
    board.to_csv(csv, index=False)
    with pytest.raises(RankuqError, match="condition 'wikiqa' has two baseline rows"):
        read_run_dir(run_dir)


def test_a_non_numeric_metric_is_named(run_dir):
    csv = run_dir / "leaderboard.csv"
    board = pd.read_csv(csv).astype({"R@1 std": object})
    board.loc[0, "R@1 std"] = "n/a"
    board.to_csv(csv, index=False)
    with pytest.raises(RankuqError, match=r"columns \['R@1 std'\] hold values of the wrong type"):
        read_run_dir(run_dir)


def test_a_plot_index_naming_a_missing_file_is_an_error(run_dir):
    (run_dir / "plots" / "risk_aversion_ensemble_wikiqa.png").unlink()
    with pytest.raises(
        RankuqError, match=r"index.json names missing plot files .*risk_aversion_ensemble_wikiqa"
    ):
        read_run_dir(run_dir)


def test_a_malformed_plot_index_is_an_error(run_dir):
    (run_dir / "plots" / "index.json").write_text(json.dumps([{"condition": "wikiqa"}]))
    with pytest.raises(
        RankuqError, match=r"index.json: not a JSON list of \{condition, method, kind, path\}"
    ):
        read_run_dir(run_dir)


def test_mlflow_round_trip_gives_the_run_dirs_board_and_plots(finished_run, tracking_uri, tmp_path):
    expected = read_run_dir(finished_run)
    board = read_tracking(tracking_uri, None, tmp_path)  # the newest grid
    assert board.name == "my-grid"
    pd.testing.assert_frame_equal(board.table, expected.table)
    assert [(p.condition, p.method, p.kind, p.path.name) for p in board.plots] == [
        (p.condition, p.method, p.kind, p.path.name) for p in expected.plots
    ]
    assert all(
        mine.path.read_bytes() == theirs.path.read_bytes()
        for mine, theirs in zip(board.plots, expected.plots, strict=True)
    )
    assert paper_markdown(board) == paper_markdown(expected)


def test_mlflow_grid_by_name_and_unknown_names_listed(tracking_uri, tmp_path):
    old = read_tracking(tracking_uri, "old-grid", tmp_path)
    assert old.name == "old-grid" and set(old.table.condition) == {"wikiqa"} and len(old.plots) == 4
    grids = r"\(grids there: bare-grid, my-grid, old-grid\)"
    with pytest.raises(RankuqError, match=rf"no grid run named 'nope' at .* {grids}"):
        read_tracking(tracking_uri, "nope", tmp_path)


def test_a_grid_run_without_the_board_tags_is_an_error(tracking_uri, tmp_path):
    with pytest.raises(RankuqError, match=r"'bare-grid' .*KeyError: 'rankuq.metrics'; it was not logged"):
        read_tracking(tracking_uri, "bare-grid", tmp_path)


def test_a_missing_sqlite_store_is_an_error_not_a_new_store(tmp_path):
    uri = f"sqlite:///{tmp_path / 'typo.db'}"
    with pytest.raises(RankuqError, match=r"typo\.db: no such MLflow store"):
        read_tracking(uri, None, tmp_path)
    assert not Path(tmp_path / "typo.db").exists()
