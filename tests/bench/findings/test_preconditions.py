"""The preconditions (bench.findings.preconditions): a failing one makes its condition untestable,
with the reason, on hand-made per-query records (the fixture ``run_of``)."""

from dataclasses import replace

import pandas as pd

from rankuq.bench import statistics
from rankuq.bench.findings.verdicts import assess, judge_all


def test_a_ranker_below_bm25_where_it_was_trained_makes_its_condition_untestable(run_of, values, lower_ece):
    claim = replace(lower_ece, preconditions=("works_in_domain",))
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
            ("c", "bert", "AP"): [values(0.40, 0.05, 20 + s) for s in range(3)],
            ("c", "ensemble", "AP"): [values(0.70, 0.05, 40 + s) for s in range(3)],
            ("c", "bm25", "AP"): [values(0.60, 0.05, 30 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE
    note = row.measured[0].note
    assert note.startswith("works_in_domain: here: bert's AP − BM25's = -0.2")
    assert "ensemble's AP" not in note  # the cause is named, the ranker that works is not
    assert row.measured[0].effect is not None  # gated out, its d still measured (and shown)


def test_the_method_under_test_must_work_as_well_as_bert(run_of, values, lower_ece):
    """A claim about the ensemble needs the ensemble above BM25 too (a GP head below BM25 is no
    working ranker, whatever bert does)."""
    claim = replace(lower_ece, preconditions=("works_in_domain",))
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
            ("c", "bert", "AP"): [values(0.70, 0.05, 20 + s) for s in range(3)],
            ("c", "ensemble", "AP"): [values(0.40, 0.05, 40 + s) for s in range(3)],
            ("c", "bm25", "AP"): [values(0.60, 0.05, 30 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE and "✗" not in row.measured[0].note
    assert "ensemble's AP − BM25's = -0.2" in row.measured[0].note


def _shifted_run(run_of, values, shifted_bert_ap: float):
    """plain: trained and tested on task t; shifted: trained as plain, tested elsewhere (its lists'
    own in-domain model: own); bert below BM25 in the shifted condition."""
    from rankuq.bench.config.grid import Side

    records = {
        ("plain", "bert", "AP"): [values(0.70, 0.05, 20 + s) for s in range(3)],
        ("plain", "bm25", "AP"): [values(0.50, 0.05, 30 + s) for s in range(3)],
        ("shifted", "bert", "AP"): [values(shifted_bert_ap, 0.05, 50 + s) for s in range(3)],
        ("shifted", "bm25", "AP"): [values(0.60, 0.05, 60 + s) for s in range(3)],
        ("own", "bert", "AP"): [values(0.65, 0.05, 70 + s) for s in range(3)],
        ("own", "bm25", "AP"): [values(0.50, 0.05, 100 + s) for s in range(3)],
        ("shifted", "bert", "ECE"): [values(0.20, 0.01, s) for s in range(3)],
        ("shifted", "ensemble", "ECE"): [values(0.10, 0.01, 10 + s) for s in range(3)],
        ("shifted", "ensemble", "AP"): [values(0.30, 0.05, 80 + s) for s in range(3)],
        ("plain", "ensemble", "AP"): [values(0.72, 0.05, 90 + s) for s in range(3)],
    }
    kinds = {"plain": ("in-domain", "standard"), "own": ("in-domain", "standard")}
    kinds["shifted"] = ("cross-domain", "standard")
    run = run_of(records, kinds=kinds)
    run.tested.update({"plain": ("wikiqa", "bm25"), "own": ("clariq", "bm25"), "shifted": ("clariq", "bm25")})
    wikiqa, clariq = Side(task="wikiqa", ns="bm25"), Side(task="clariq", ns="bm25")
    run.trained.update({"plain": wikiqa, "shifted": wikiqa, "own": clariq})
    return run


def test_under_a_shift_the_ranker_is_judged_where_it_was_trained_not_against_bm25_there(
    run_of, values, lower_ece
):
    """The papers study rankers the shift breaks: bert (0.35) and the ensemble below BM25 (0.60) in
    the shifted condition do not gate a calibration claim; both above BM25 where trained do."""
    claim = replace(lower_ece, preconditions=("works_in_domain", "shift_hurts"), kinds=("cross-domain",))
    run = _shifted_run(run_of, values, shifted_bert_ap=0.35)
    [row] = judge_all([assess(claim, [run])])
    checks = {c.name: c for c in row.measured[0].checks}
    assert (
        checks["works_in_domain"].passed
        and "in plain, where it was trained" in checks["works_in_domain"].detail
    )
    assert (
        checks["shift_hurts"].passed
        and "bert trained in own, on the same lists" in checks["shift_hurts"].detail
    )
    assert row.verdict == statistics.REPRODUCED


def test_a_shift_that_does_not_hurt_on_the_same_lists_is_untestable(run_of, values, lower_ece):
    claim = replace(lower_ece, preconditions=("works_in_domain", "shift_hurts"), kinds=("cross-domain",))
    run = _shifted_run(run_of, values, shifted_bert_ap=0.75)  # above own's 0.65: no shift to study
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE and row.measured[0].note.startswith(
        "shift_hurts: bert's AP here"
    )


def test_a_cross_ns_shift_without_a_model_trained_on_the_tested_negatives_cannot_be_checked(
    run_of, values, lower_ece
):
    """Cross-NS: the reference is bert trained with the tested lists' own negatives; a grid without
    it cannot tell whether the shift hurts (not the BM25-negative lists of another condition)."""
    claim = replace(lower_ece, preconditions=("shift_hurts",), kinds=("cross-NS",))
    run = _shifted_run(run_of, values, shifted_bert_ap=0.35)
    run.kinds["shifted"] = ("cross-NS", "standard")
    run.tested["shifted"] = ("clariq", "dense")
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE
    assert "trains on and tests shifted's lists (clariq:dense, standard lists)" in row.measured[0].note


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


def test_a_ranker_check_is_worked_out_once_per_run(run_of, values, monkeypatch):
    """Every claim of a condition asks for the same bert-against-BM25 bootstrap: the run keeps it, and
    a run read anew works it out anew."""
    from rankuq.bench.findings import preconditions

    records = {
        ("c", "bert", "AP"): [values(0.70, 0.05, 20 + s) for s in range(3)],
        ("c", "bm25", "AP"): [values(0.60, 0.05, 30 + s) for s in range(3)],
    }
    calls = []
    work = preconditions._compared
    monkeypatch.setattr(preconditions, "_compared", lambda *a, **k: calls.append(a[0]) or work(*a, **k))
    run = run_of(records)
    first = preconditions.ranker_check(run, "c")
    assert first.passed and preconditions.ranker_check(run, "c") is first
    again = preconditions.ranker_check(run_of(records), "c")
    assert again == first and again is not first and len(calls) == 2


def test_a_method_that_does_not_work_makes_its_effectiveness_claim_untestable_not_refuted(
    run_of, values, lower_ece
):
    """One cause, one verdict: a GP head below BM25 where it was trained does not "lose BERT's R@1" as
    a finding of its own; its effectiveness claim against bert is untestable for works_in_domain of the
    method, named once (bert, which works, is not named)."""
    from rankuq.bench.findings.preconditions import rankers_of

    keeps = replace(
        lower_ece,
        metric="R@1",
        against="bert",
        expect="higher",
        scale="absolute",
        paper_effect=0.01,
        preconditions=("works_in_domain",),
    )
    assert rankers_of(keeps) == ("bert", "ensemble") == rankers_of(lower_ece)
    assert rankers_of(replace(lower_ece, method="bert", against="bm25")) == ("bert",)
    records = {
        ("c", "bert", "R@1"): [values(0.60, 0.05, s) for s in range(3)],
        ("c", "ensemble", "R@1"): [values(0.20, 0.05, 10 + s) for s in range(3)],
        ("c", "bert", "AP"): [values(0.70, 0.05, 20 + s) for s in range(3)],
        ("c", "bm25", "AP"): [values(0.60, 0.05, 30 + s) for s in range(3)],
    }
    broken = {**records, ("c", "ensemble", "AP"): [values(0.30, 0.05, 40 + s) for s in range(3)]}
    [row] = judge_all([assess(keeps, [run_of(broken)])])
    assert row.verdict == statistics.UNTESTABLE and row.measured[0].failed.name == "works_in_domain"
    assert row.note == "works_in_domain: here: ensemble's AP − BM25's = " + row.note.split("= ")[1]
    assert "bert's AP" not in row.note and row.measured[0].effect.d < -0.3  # measured, shown, not judged
    # The same R@1 from a ranker that works where it was trained: the claim is judged, and refuted.
    working = {**records, ("c", "ensemble", "AP"): [values(0.72, 0.05, 40 + s) for s in range(3)]}
    [row] = judge_all([assess(keeps, [run_of(working)])])
    assert row.verdict == statistics.REFUTED


def test_a_shift_whose_reference_does_not_work_is_untestable_for_that_not_for_shift_hurts(
    run_of, values, lower_ece
):
    """The no-shift model on the test domain (own) below BM25 there: the shift is compared with no
    working ranker, so the claim is untestable by works_in_domain (of the reference), not shift_hurts."""
    claim = replace(lower_ece, preconditions=("works_in_domain", "shift_hurts"), kinds=("cross-domain",))
    from rankuq.bench.findings.run_tables import preconditions_table

    run = _shifted_run(run_of, values, shifted_bert_ap=0.35)
    own = run.parts("own", "bert", "AP")  # own's bert at 0.65; BM25 as good there: bert is not above it
    run.queries._parts[("own", "bm25", "AP")] = own
    [row] = judge_all([assess(claim, [run])])
    m = row.measured[0]
    assert row.verdict == statistics.UNTESTABLE and m.failed.name == "works_in_domain"
    assert m.note.startswith("works_in_domain: the shift's reference, bert trained in own (the test domain")
    assert [c.name for c in m.checks] == ["works_in_domain", "works_in_domain"] and m.checks[0].passed
    # The preconditions table's shift column names the cause too.
    [line] = [line for line in preconditions_table([run]) if line.startswith("| g | shifted |")]
    assert "| ✗ works_in_domain: the shift's reference" in line


def test_a_claim_against_the_model_without_shift_needs_that_model_working(run_of, values, lower_ece):
    """ "BERT's R@1 is lower under the shift than without": its reference, bert trained on the test
    domain (own), below BM25 there makes the claim untestable by works_in_domain of that reference,
    not judged against a model that does not rank (a drop or a rise against it says nothing)."""
    claim = replace(
        lower_ece,
        method="bert",
        metric="AP",
        baseline_condition="no-shift",
        kinds=("cross-domain",),
        preconditions=("works_in_domain",),
    )
    run = _shifted_run(run_of, values, shifted_bert_ap=0.35)
    [row] = judge_all([assess(claim, [run])])
    m = row.measured[0]
    assert m.verdict != statistics.UNTESTABLE and m.checks[0].passed
    assert (
        "in plain, where it was trained" in m.checks[0].detail
        and "the shift's reference, in own" in m.checks[0].detail
    )
    run = _shifted_run(run_of, values, shifted_bert_ap=0.35)
    run.queries._parts[("own", "bm25", "AP")] = run.parts("own", "bert", "AP")
    [row] = judge_all([assess(claim, [run])])
    assert row.verdict == statistics.UNTESTABLE
    assert row.note.startswith("works_in_domain: the shift's reference, bert trained in own (the test domain")
