"""The cross-NS measurement's pure parts: the shift decision and the table on a worked example, the
grid it derives from paper000 (the run's members and dev lists), and its bad input."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.benchmarks import cross_ns
from rankuq.bench.config.grid import load_grid
from rankuq.bench.planning.plan import plan
from rankuq.bench.rundir.layout import RunLayout
from rankuq.errors import RankuqError

PAPER000 = Path(__file__).parents[3] / "rankuq" / "bench" / "grids" / "paper000.yaml"


def _series(values: list[float], qids: list[str]) -> pd.Series:
    return pd.Series(np.array(values, dtype=float), index=qids)


@pytest.fixture(scope="module")
def worked() -> pd.DataFrame:
    """Two seeds, four queries. bm25 lists: R@1 0.75 in both seeds; random lists: every query lost
    (d = -0.75, a shift); dense lists: the bm25 lists' values (d = 0, no shift). BM25 has R@1 0.5 on
    its own lists and 1 on random ones. One series lists its queries in another order and one holds
    a fifth query the others lack: rows are matched by query."""
    qids = ["a", "b", "c", "d"]
    bert = {
        "bm25": [_series([1, 1, 1, 0], qids), _series([1, 1, 0, 1], qids)],
        "random": [_series([0, 0, 0, 0], qids), _series([0, 0, 0, 0, 1], [*qids, "e"])],
        "dense": [_series([0, 1, 1, 1], ["d", "c", "b", "a"]), _series([1, 1, 0, 1], qids)],
    }
    bm25 = {
        "bm25": _series([1, 0, 1, 0], qids),
        "random": _series([1, 1, 1, 1], qids),
        "dense": _series([0, 0, 0, 0], qids),
    }
    return pd.DataFrame(
        cross_ns.shift_rows("wiki", bert, bm25, "bm25", resamples=2000), columns=cross_ns.COLUMNS
    )


def test_a_list_that_loses_every_query_is_a_shift_and_an_equal_one_is_not(worked):
    rows = worked.set_index("ns")
    assert list(rows.index) == ["bm25", "random", "dense"]
    assert (rows["queries"] == 4).all() and (rows["seeds"] == 2).all()
    assert rows.loc["bm25", "bert R@1"] == pytest.approx(0.75)
    assert rows.loc["random", "bert R@1"] == 0 and rows.loc["dense", "bert R@1"] == pytest.approx(0.75)
    assert rows["bm25 R@1"].tolist() == pytest.approx([0.5, 1.0, 0.0])
    assert rows.loc["random", "d R@1"] == pytest.approx(-0.75)
    assert rows.loc["random", "d high"] < 0 and rows.loc["random", "shift"]
    # the same values: every replicate's difference is 0, an interval that does not lie below 0
    assert (rows.loc["dense", ["d R@1", "d low", "d high"]] == 0).all() and not rows.loc["dense", "shift"]
    assert not rows.loc["bm25", "shift"]
    # a constant side has a one-point interval
    assert rows.loc["random", ["bert low", "bert high", "bm25 low", "bm25 high"]].tolist() == [0, 0, 1, 1]


def test_the_markdown_table_marks_the_no_shift_list_and_the_shifts(worked):
    lines = cross_ns.markdown(worked, {"wiki": "bm25"}).splitlines()
    assert len(lines) == 5 and lines[0].startswith("| domain | test NS | queries | seeds |")
    assert lines[2].startswith("| wiki | bm25 | 4 | 2 | 0.750 [") and lines[2].endswith(
        "| (no-shift list) | no |"
    )
    assert lines[3].startswith(
        "| wiki | random | 4 | 2 | 0.000 [0.000, 0.000] | 1.000 [1.000, 1.000] | -0.750 ["
    )
    assert lines[3].endswith("| yes |")
    assert lines[4].endswith("| 0.000 [0.000, 0.000] | no |")


def test_the_cut_grid_scores_paper000s_members_on_the_lists_its_test_side_builds():
    spec, params = load_grid(PAPER000)
    cut = cross_ns.measurement_grid(spec, ["clariq"], ["bm25", "random"], [0, 2], str(PAPER000))
    assert [c.label() for c in cut[0].conditions()] == ["clariq-bm25-to-bm25", "clariq-bm25-to-random"]
    assert list(cut[0].methods) == ["bm25", "bert"]
    layout = RunLayout(Path("unused"))
    ours, theirs = plan(*cut, layout), plan(spec, params, layout)

    def bert(grid, condition: str) -> list[tuple[str, ...]]:
        return [c.members for c in grid.cells if c.method == "bert" and c.condition == condition]

    members = bert(theirs, "clariq")
    assert bert(ours, "clariq-bm25-to-random") == [members[0], members[2]]  # seeds 0 and 2
    # the no-shift cell is the run's own (same predictions key: what seeds.csv records)
    keys = {c.seed: c.key for c in theirs.cells if c.method == "bert" and c.condition == "clariq"}
    assert [c.key for c in ours.cells if c.method == "bert" and c.condition == "clariq-bm25-to-bm25"] == [
        keys[0],
        keys[2],
    ]
    # the dev lists: the grid's own (its clariq and clariq-bm25-to-random conditions')
    assert ours.dev["clariq-bm25-to-bm25"] == theirs.dev["clariq"]
    assert ours.dev["clariq-bm25-to-random"] == theirs.dev["clariq-bm25-to-random"]


def test_a_domain_without_a_no_shift_condition_is_refused_with_the_names_it_takes():
    spec, _ = load_grid(PAPER000)
    with pytest.raises(
        RankuqError, match=r"paper000.yaml: no no-shift condition named 'udc'; --domains takes"
    ):
        cross_ns.measurement_grid(spec, ["udc"], ["bm25"], [0], str(PAPER000))
    with pytest.raises(RankuqError, match=r"--ns random: name the no-shift test NS 'bm25' too"):
        cross_ns.references(spec, ["clariq"], ["random"])


def test_a_run_directory_without_a_grid_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    out = tmp_path / "table.csv"
    monkeypatch.setattr(sys, "argv", ["cross_ns", "--run-dir", str(tmp_path / "none"), "--out", str(out)])
    with pytest.raises(SystemExit) as stop:
        cross_ns.main()
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert error == f"cross_ns: error: grid file not found: {tmp_path / 'none' / 'grid.yaml'}\n"
    assert not out.exists()
