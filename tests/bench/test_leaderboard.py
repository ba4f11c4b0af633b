import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from rankuq.bench.leaderboard import (
    LEADERBOARD_METRICS,
    Board,
    Entry,
    adjusted_p_values,
    footnote,
    leaderboard,
    paper_latex,
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


def test_rich_tables_print_one_compact_table_per_condition(run_dir):
    tables = rich_tables(read_run_dir(run_dir))
    assert [t.title for t in tables] == ["my-grid: wikiqa", "my-grid: clariq-to-wikiqa"]
    assert [c.header for c in tables[0].columns] == ["method", "R@1", "ECE", "nAUC AP u_max"]
    assert tables[0].columns[0]._cells[1].plain == "bert (baseline)\n2 seeds"
    ensemble_r1 = tables[0].columns[1]._cells[2]
    assert ensemble_r1.plain == "0.440†\n±0.020" and ensemble_r1.spans[0].style == "bold"
    assert tables[0].columns[2]._cells[0].plain == "—"  # bm25 has no ECE


def test_a_full_board_is_one_table_per_condition_that_fits_120_columns(run_dir):
    """Thirteen metrics (every leaderboard column) in one table of at most 120 terminal columns,
    their names whole."""
    table = read_run_dir(run_dir).table
    for metric in LEADERBOARD_METRICS:
        for suffix in ("", " std", " p"):
            table[f"{metric}{suffix}"] = table[f"R@1{suffix}"]
    console = Console(width=120, record=True)
    tables = rich_tables(Board("my-grid", table, ()))
    assert len(tables) == 2 and len(tables[0].columns) == 1 + len(LEADERBOARD_METRICS)
    for shown in tables:
        console.print(shown)
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 120
    assert "0.440†" in text and all(metric in text for metric in LEADERBOARD_METRICS)  # headers whole


def test_benjamini_hochberg_adjusts_within_each_condition():
    """p_(i) · m / i, then the running minimum from the largest p down, per condition (m tests)."""
    p = [0.01, 0.04, 0.03, 0.2, np.nan]
    table = pd.DataFrame(
        {
            "condition": ["a", "a", "a", "a", "b"],
            "method": ["m1", "m2", "m3", "m4", "m1"],
            "seeds": 1,
            "baseline": False,
            "R@1": 0.5,
            "R@1 std": 0.0,
            "R@1 p": p,
        }
    )
    # Sorted: 0.01, 0.03, 0.04, 0.2 (m = 4) → 0.04, 0.06, 0.0533…, 0.2 → minimum from the top:
    # 0.2, 0.0533…, 0.0533…, 0.04 (0.06 falls to 0.04·4/3).
    expected = [0.01 * 4 / 1, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2 * 4 / 4]
    adjusted = adjusted_p_values(table)["R@1 p"]
    assert adjusted[:4].tolist() == pytest.approx(expected)
    assert np.isnan(adjusted[4])  # no test stays untested; condition b's family is empty


def test_marks_follow_the_adjusted_p_values(run_dir):
    """ensemble's R@1 p = 0.04 alone is significant; beside two larger p-values of its condition
    it is not (0.04 · 3 / 1 > 0.05 …, BH: min over 0.12, 0.09, 0.06 = 0.06)."""
    csv = run_dir / "leaderboard.csv"
    board = pd.read_csv(csv)
    clariq = board.condition == "clariq-to-wikiqa"
    board.loc[clariq & (board.method == "ensemble"), ["R@1 p", "ECE p"]] = [0.04, 0.06]
    board.loc[clariq & (board.method == "bm25"), "R@1 p"] = 0.045
    board.to_csv(csv, index=False)
    assert adjusted_p_values(board)[clariq]["R@1 p"].dropna().tolist() == pytest.approx([0.06, 0.06])
    ensemble = paper_tables(read_run_dir(run_dir).table)["clariq-to-wikiqa"].loc["ensemble"]
    assert ensemble["R@1"].mark == "" and ensemble["R@1"].change == "-20.00%"


def test_footnote_names_the_correction(run_dir):
    text = footnote(read_run_dir(run_dir).table)
    assert "p < 0.05 after the Benjamini–Hochberg correction over the tests of the condition's table" in text


def test_latex_has_a_booktabs_table_per_condition_with_escaped_names(run_dir):
    board = read_run_dir(run_dir)
    board.table.loc[0, "method"] = "bm25_k1&b"
    text = paper_latex(board)
    assert text.count(r"\begin{table}") == 2 and text.count(r"\toprule") == 2
    assert r"\caption{my-grid: wikiqa}" in text
    assert r"method & seeds & R@1 & ECE & nAUC AP u\_max \\" in text
    assert r"bm25\_k1\&b & 2 & $0.380 \pm 0.000$ & -- & -- \\" in text
    assert r"ensemble & 2 & $\mathbf{0.440 \pm 0.020}$\textsuperscript{\dag} &" in text
    assert r"$0.200 \pm 0.030$\textsuperscript{\ddag}" in text
    assert "Benjamini–Hochberg" in text.splitlines()[-1] and "in brackets" not in text


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
