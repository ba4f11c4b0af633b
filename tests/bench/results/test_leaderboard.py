"""The leaderboard: mean and std over seeds, relative changes against the baseline with marks in each
metric's direction, and the Benjamini–Hochberg correction within a condition."""

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.results.boards import read_run_dir
from rankuq.bench.results.leaderboard import (
    PaperTable,
    adjusted_p_values,
    footnote,
    leaderboard,
    paper_tables,
)


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


def _shown(table: PaperTable, method: str, metric: str) -> tuple[object, ...]:
    """A cell as shown: its value, change, mark and whether it is the column's best."""
    cell = table.cell(method, metric)
    return cell["value"], cell["change"], cell["mark"], cell["best"]


def test_paper_tables_give_relative_changes_and_marks_in_the_metrics_direction(run_dir):
    tables = paper_tables(read_run_dir(run_dir).table)
    assert list(tables) == ["wikiqa", "clariq-to-wikiqa"]
    wikiqa, clariq = tables["wikiqa"], tables["clariq-to-wikiqa"]
    assert wikiqa.methods == ["bm25", "bert (baseline)", "ensemble"] and wikiqa.seeds == [2, 2, 2]
    assert list(wikiqa.cells) == ["R@1", "ECE", "nAUC AP u_max"]
    assert _shown(wikiqa, "ensemble", "R@1") == ("0.440 ± 0.020", "+10.00%", "†", True)
    # ECE: lower is better, so a significant drop is an improvement.
    assert _shown(wikiqa, "ensemble", "ECE") == ("0.150 ± 0.005", "-25.00%", "†", True)
    assert _shown(wikiqa, "ensemble", "nAUC AP u_max") == ("0.330 ± 0.010", "+10.00%", "", True)
    assert _shown(wikiqa, "bm25", "R@1") == ("0.380 ± 0.000", "-5.00%", "", False)
    assert _shown(wikiqa, "bm25", "ECE") == ("—", "", "", False)
    assert _shown(wikiqa, "bert (baseline)", "R@1") == ("0.400 ± 0.050", "", "", False)
    assert _shown(clariq, "bm25", "R@1") == ("0.300 ± 0.000", "+20.00%", "†", True)
    assert _shown(clariq, "ensemble", "R@1") == ("0.200 ± 0.030", "-20.00%", "‡", False)
    assert _shown(clariq, "ensemble", "ECE") == ("0.125 ± 0.010", "+25.00%", "‡", False)
    assert clariq.cell("bert (baseline)", "ECE")["best"]
    # A tie on the shown value makes both best; no p-value, no mark.
    assert _shown(clariq, "ensemble", "nAUC AP u_max") == ("0.200 ± 0.030", "+0.00%", "", True)
    assert clariq.cell("bert (baseline)", "nAUC AP u_max")["best"]


def test_a_condition_without_a_baseline_row_shows_no_changes(run_dir):
    table = read_run_dir(run_dir).table
    table.loc[table.condition == "wikiqa", "baseline"] = False
    wikiqa = paper_tables(table)["wikiqa"]
    assert _shown(wikiqa, "ensemble", "R@1") == ("0.440 ± 0.020", "", "", True)
    assert paper_tables(table)["clariq-to-wikiqa"].cell("bm25", "R@1")["change"] == "+20.00%"


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
    r1 = paper_tables(read_run_dir(run_dir).table)["clariq-to-wikiqa"].cell("ensemble", "R@1")
    assert r1["mark"] == "" and r1["change"] == "-20.00%"


def test_footnote_names_the_correction(run_dir):
    text = footnote(read_run_dir(run_dir).table)
    assert "p < 0.05 after the Benjamini–Hochberg correction over the tests of the condition's table" in text
