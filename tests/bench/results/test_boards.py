"""A board read back from a run directory (leaderboard.csv, the plot index) or from MLflow, each damaged
input named."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.results.boards import read_run_dir, read_tracking, read_whole_csv
from rankuq.bench.results.leaderboard import metrics_of
from rankuq.bench.results.rendering import paper_markdown
from rankuq.bench.results.tracking import Tracker
from rankuq.errors import RankuqError

from ..conftest import log_grid


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


# A CSV of 30,000 rows, so pyarrow's reader splits it into blocks read on several threads; a name
# with a comma and a newline in quotes is one field.
ROWS = "".join(f'c,"m{i},\n{i}",{i}\n' for i in range(30_000))


@pytest.mark.parametrize(
    ("damage", "line"),
    [
        (lambda rows: rows.replace('c,"m20000,\n20000",20000\n', "c,m20000\n"), 20_002),  # short
        (lambda rows: rows.replace('c,"m9,\n9",9\n', 'c,"m9,\n9",9,9\n'), 11),  # long
        (lambda rows: rows.replace('c,"m7,\n7",7\n', "\n"), 9),  # blank: pandas would skip it
    ],
)
def test_every_row_of_a_large_csv_has_the_headers_width(tmp_path, damage, line):
    """The widths are checked by pyarrow's reader, and the line named by the csv module's."""
    csv = tmp_path / "board.csv"
    csv.write_text("condition,method,seeds\n" + ROWS)
    table = read_whole_csv(csv, "fix it")
    assert len(table) == 30_000 and table.method[5] == "m5,\n5"
    csv.write_text("condition,method,seeds\n" + damage(ROWS))
    named = rf"board.csv, line {line}: \d fields where the header has 3; fix it"
    with pytest.raises(RankuqError, match=named):
        read_whole_csv(csv, "fix it")


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


def test_a_board_of_one_seed_reads_back_from_mlflow_as_from_the_run_dir(run_dir, tmp_path):
    """One seed's std is not logged (MLflow showed a spread of 0); the board read back has the 0."""
    board = pd.read_csv(run_dir / "leaderboard.csv").assign(seeds=1)
    for metric in metrics_of(board):  # as the board writes one seed: 0 beside a value
        board[f"{metric} std"] = np.where(board[metric].notna(), 0.0, np.nan)
    board.to_csv(run_dir / "leaderboard.csv", index=False)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    tracker = Tracker(uri, served=True)
    log_grid(tracker, run_dir, "one-seed")
    cells = tracker.client.search_runs([tracker.experiment_id], "tags.`rankuq.level` = 'cell'")
    assert len(cells) == 6 and not any(key.endswith("_std") for cell in cells for key in cell.data.metrics)
    (tmp_path / "downloaded").mkdir()
    read = read_tracking(uri, None, tmp_path / "downloaded")
    pd.testing.assert_frame_equal(read.table, read_run_dir(run_dir).table)


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


def test_a_cell_logged_again_under_its_grid_run_replaces_the_older_one():
    """Issue 48: after the data changed, a rerun logged (condition, method) a second time under the
    same grid run, and `leaderboard --tracking-uri` showed two rows, then failed to reindex."""
    from types import SimpleNamespace

    from rankuq.bench.results.boards import current_cells

    def cell(shift: str, method: str, started: int) -> SimpleNamespace:
        tags = {"shift": shift, "method": method}
        return SimpleNamespace(info=SimpleNamespace(start_time=started), data=SimpleNamespace(tags=tags))

    old, other, new = cell("wikiqa", "bert", 1), cell("wikiqa", "bm25", 2), cell("wikiqa", "bert", 3)
    for given in ([new, old, other], [old, other, new]):
        found = current_cells(given)
        assert len(found) == 2 and new in found and other in found and old not in found
