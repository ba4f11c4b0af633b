"""The preconditions (bench.findings.preconditions): a failing one makes its condition untestable,
with the reason, on hand-made per-query records (the fixture ``run_of``)."""

from dataclasses import replace

import pandas as pd

from rankuq.bench.findings import statistics
from rankuq.bench.findings.verdicts import assess, judge_all


def test_a_ranker_below_bm25_makes_its_condition_untestable_with_the_reason(run_of, values, lower_ece):
    claim = replace(lower_ece, preconditions=("above_bm25",))
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
            ("c", "bert", "AP"): [values(0.40, 0.05, 20 + s) for s in range(3)],
            ("c", "bm25", "AP"): [values(0.60, 0.05, 30 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE
    assert row.measured[0].note.startswith("above_bm25: bert's AP − BM25's = -0.2")


def test_a_degenerate_risk_selection_is_untestable(run_of, values, lower_ece):
    claim = replace(
        lower_ece,
        metric="RA.R@1",
        reference=("R@1",),
        scale="absolute",
        expect="higher",
        paper_effect=0.02,
        preconditions=("b_selected",),
    )
    seeds = pd.DataFrame(
        {"condition": ["c"] * 3, "method": ["ensemble"] * 3, "seed": [0, 1, 2], "RA.b": [0.0] * 3}
    )
    run = run_of(
        {
            ("c", "ensemble", "RA.R@1"): [values(0.5, 0.3, s) for s in range(3)],
            ("c", "ensemble", "R@1"): [values(0.5, 0.3, s) for s in range(3)],
        },
        seeds=seeds,
    )
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE and "b per seed: 0, 0, 0" in row.measured[0].note


def test_a_condition_check_is_worked_out_once_per_run(run_of, values, monkeypatch):
    """Every claim of a condition asks for the same above_bm25 bootstrap: the run keeps it, and a
    run read anew works it out anew."""
    from rankuq.bench.findings import preconditions

    records = {
        ("c", "bert", "AP"): [values(0.70, 0.05, 20 + s) for s in range(3)],
        ("c", "bm25", "AP"): [values(0.60, 0.05, 30 + s) for s in range(3)],
    }
    calls = []
    work = preconditions._condition_check
    monkeypatch.setattr(preconditions, "_condition_check", lambda *a: calls.append(a[1:]) or work(*a))
    run = run_of(records)
    first = preconditions.condition_check("above_bm25", run, "c")
    assert first.passed and preconditions.condition_check("above_bm25", run, "c") is first
    again = preconditions.condition_check("above_bm25", run_of(records), "c")
    assert again == first and again is not first and len(calls) == 2
