"""How a claim is judged (bench.findings.verdicts): the effect from the paired bootstrap and the
verdicts over the registry, on small hand-made per-query records (the fixture ``run_of``) whose
effects are worked out below."""

import math
from dataclasses import replace

import numpy as np
import pytest

from rankuq.bench import statistics
from rankuq.bench.findings.claims import Claim
from rankuq.bench.findings.verdicts import assess, judge_all, measure


def test_a_relative_effect_is_the_ratio_of_the_seeds_means(run_of, values, lower_ece):
    # ECE 0.10 for bert, 0.05 for the ensemble in every seed, small noise: d = (0.05 − 0.10) / 0.10 = −50 %
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
        }
    )
    m = measure(lower_ece, run, "c")
    ensemble = np.mean([values(0.05, 0.01, 10 + s).mean() for s in range(3)])
    bert = np.mean([values(0.10, 0.01, s).mean() for s in range(3)])
    by_hand = (ensemble - bert) / bert
    assert m.effect is not None and m.effect.d == pytest.approx(by_hand, rel=1e-12)
    assert m.effect.low < m.effect.d < m.effect.high and m.effect.high < 0
    assert m.value == pytest.approx(0.05, abs=0.002) and m.reference == pytest.approx(0.10, abs=0.002)
    [row] = judge_all([assess(lower_ece, [run])])
    # far beyond the paper's −14 %, significant after BH: reproduced
    assert row.verdict == statistics.REPRODUCED and row.measured[0].verdict == statistics.REPRODUCED


def test_a_relative_claim_over_a_near_zero_reference_is_judged_in_absolute_terms(run_of, values, lower_ece):
    """bert's ECE 0.02 (< NEAR_ZERO): −14 % of it is the paper's effect, d is the ECE difference."""
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.02, 0.002, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.03, 0.002, 10 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(lower_ece, [run])])
    assert row.claim.scale == "absolute" and row.claim.paper_effect == pytest.approx(-0.14 * 0.02, abs=2e-4)
    assert row.overall.d == pytest.approx(0.01, abs=1e-3) and "judged in absolute terms" in row.claim.quote
    assert row.verdict == statistics.REFUTED  # +0.01 against the paper's lower: significant the other way


def test_noise_that_covers_zero_and_the_paper_s_effect_is_inconclusive_with_its_power(
    run_of, values, lower_ece
):
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.2, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.095, 0.2, 10 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(lower_ece, [run])])
    m = row.measured[0]
    assert m.effect.low < -0.14 and m.effect.high > 0  # covers both
    assert m.verdict == statistics.INCONCLUSIVE == row.verdict
    assert statistics.minimum_detectable_effect(m.effect) > 0.14


def test_a_tight_zero_is_smaller_than_reported_not_refuted(run_of, values, lower_ece):
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.001, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.10, 0.001, 10 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(lower_ece, [run])])
    assert row.measured[0].effect.low > -0.14
    assert row.verdict == statistics.SMALLER


@pytest.mark.parametrize(
    ("expect", "metric", "bound", "claimed", "other", "spread", "tolerance"),
    [
        ("at least", "AP", 0.70, 0.75, 0.60, 0.1, 0.02),  # a floor: above it reproduces, below refutes
        # paper 000's in-domain ECE of at most 0.036 (it was judged against 0 as "lower" with a floor,
        # which refuted every ECE above 0)
        ("at most", "ECE", 0.036, 0.016, 0.15, 0.01, 0.005),
    ],
)
def test_a_bound_is_judged_on_the_value_itself(
    run_of, values, expect, metric, bound, claimed, other, spread, tolerance
):
    """A floor or a ceiling: the value on the claimed side of the bound reproduces (d is the value
    itself), the value on the other side refutes."""
    claim = Claim(
        id="bound",
        paper=None,
        grid="g",
        text=f"{metric} {expect} {bound}",
        source="this project",
        quote=f"{bound}",
        paper_effect=None,
        method="bert",
        metric=metric,
        floor=bound,
        expect=expect,
    )
    on_side = run_of({("c", "bert", metric): [values(claimed, spread, s) for s in range(3)]})
    off_side = run_of({("c", "bert", metric): [values(other, spread, s) for s in range(3)]})
    [kept], [broken] = judge_all([assess(claim, [on_side])]), judge_all([assess(claim, [off_side])])
    assert kept.overall.d == pytest.approx(claimed, abs=tolerance) and kept.verdict == statistics.REPRODUCED
    assert broken.verdict == statistics.REFUTED


def test_conditions_are_mixed_only_where_they_disagree_in_direction(run_of, values, lower_ece):
    """Mixed where one condition's 95 % CI lies on the paper's side of 0 and another's on the other
    (−50 % and +50 %): the row shows their range, no pooled d and no p. Conditions that agree in
    direction but differ in size (−50 % and −10 %, Cochran's Q p < 0.05) keep the pooled verdict, the
    row giving Q; agreeing ones are pooled."""
    from rankuq.bench.findings.render import _claims_table

    def run(b_ensemble: float):
        return run_of(
            {
                ("a", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
                ("a", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
                ("b", "bert", "ECE"): [values(0.10, 0.01, 20 + s) for s in range(3)],
                ("b", "ensemble", "ECE"): [values(b_ensemble, 0.01, 30 + s) for s in range(3)],
            }
        )

    [row] = judge_all([assess(lower_ece, [run(0.15)])])
    assert [m.verdict for m in row.measured] == [statistics.REPRODUCED, statistics.REFUTED]
    assert row.verdict == statistics.MIXED and math.isnan(row.overall_p)
    line = _claims_table([row], "t")[-2]
    a, b = (m.effect.d for m in row.measured)
    assert f"| from {a:+.1%} (a) to {b:+.1%} (b) over 2 conditions, not pooled: they disagree in " in line
    assert "the 95 % CI of b above 0, of a below it" in line and "| — | **mixed** |" in line
    [row] = judge_all([assess(lower_ece, [run(0.09)])])
    assert [m.verdict for m in row.measured] == [statistics.REPRODUCED, statistics.REPRODUCED]
    assert row.verdict == statistics.REPRODUCED and row.overall.q_p < statistics.ALPHA
    line = _claims_table([row], "t")[-2]
    assert f"{row.overall.d:+.1%} [" in line and "pooled over 2 conditions; Cochran's Q " in line
    assert "the conditions differ in size, not in direction (the pooled verdict stands)" in line
    [row] = judge_all([assess(lower_ece, [run(0.05)])])
    assert row.verdict == statistics.REPRODUCED and isinstance(row.overall, statistics.Pooled)
    assert -0.55 < row.overall.d < -0.45 and row.overall.q_p >= statistics.ALPHA
    assert "Cochran" not in _claims_table([row], "t")[-2]


def test_an_untestable_claim_shows_its_conditions_range_where_they_disagree(run_of, values, lower_ece):
    """Gated out by works_in_domain in both conditions, −50 % and +50 % are shown as their range,
    never pooled into a d near 0 that neither condition has; agreeing ones are pooled."""
    from rankuq.bench.findings.render import _claims_table
    from rankuq.bench.findings.shown import shown

    claim = replace(lower_ece, preconditions=("works_in_domain",))

    def run(b_ensemble: float):
        records = {
            ("a", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("a", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
            ("b", "bert", "ECE"): [values(0.10, 0.01, 20 + s) for s in range(3)],
            ("b", "ensemble", "ECE"): [values(b_ensemble, 0.01, 30 + s) for s in range(3)],
        }
        for c in "ab":  # bert below BM25 in both
            records[(c, "bert", "AP")] = [values(0.40, 0.05, 40 + s) for s in range(3)]
            records[(c, "bm25", "AP")] = [values(0.60, 0.05, 50 + s) for s in range(3)]
        return run_of(records)

    [row] = judge_all([assess(claim, [run(0.15)])])
    assert row.verdict == statistics.UNTESTABLE
    found = shown(row)
    a, b = (m.effect.d for m in row.measured)
    assert found.is_range and (found.low, found.high) == (a, b) and found.ends == ("a", "b")
    line = _claims_table([row], "t")[-2]
    assert f"; measured: from {a:+.1%} (a) to {b:+.1%} (b) over 2 conditions, not pooled: they " in line
    [row] = judge_all([assess(claim, [run(0.05)])])
    found = shown(row)
    pooled = statistics.pooled([m.effect for m in row.measured])
    assert (
        not found.is_range
        and found.d == pytest.approx(pooled.d)
        and found.where == "pooled over 2 conditions"
    )


def test_benjamini_hochberg_adjusts_over_the_registry(run_of, values, lower_ece):
    runs = [
        run_of(
            {
                ("c", "bert", "ECE"): [values(0.10, 0.05, s) for s in range(3)],
                ("c", "ensemble", "ECE"): [values(0.09, 0.05, 10 + s) for s in range(3)],
            }
        )
    ]
    claims = [replace(lower_ece, id=f"c{i}") for i in range(4)]
    rows = judge_all([assess(claim, runs) for claim in claims])
    raw = rows[0].measured[0].effect.p
    adjusted = [row.measured[0].adjusted_p for row in rows]
    assert all(p == pytest.approx(raw) for p in adjusted)  # four equal p's: BH leaves them as they are
    assert not math.isnan(rows[0].overall_adjusted_p)


def test_an_untestable_claim_names_its_cause_once(lower_ece):
    """The claim's note gives the first failed precondition's detail and where else it (or another)
    failed, by name; a condition's verdict cell names the precondition, its detail being in the
    preconditions cell beside it."""
    from rankuq.bench.findings.claims import Check
    from rankuq.bench.findings.render import _conditions_table
    from rankuq.bench.findings.rows import Measured, Row
    from rankuq.bench.findings.verdicts import untestable_note

    def failed(condition: str, name: str, detail: str) -> Measured:
        check = Check(name, False, detail)  # type: ignore[arg-type]
        return Measured(condition, None, 0.1, 0.1, (check,), statistics.UNTESTABLE, f"{name}: {detail}")

    measured = (
        failed("a", "works_in_domain", "here: gpf's AP − BM25's = -0.059"),
        failed("b", "works_in_domain", "here: gpf's AP − BM25's = -0.070"),
        failed("c", "shift_hurts", "bert's AP here − bert trained in a = +0.010"),
    )
    note = untestable_note(measured)
    assert note == "works_in_domain: here: gpf's AP − BM25's = -0.059 (in a; also in b; shift_hurts in c)"
    assert untestable_note(measured[:1]) == measured[0].note
    [row] = judge_all([Row(lower_ece, None, measured, statistics.NOT_MEASURED, "")])
    assert row.verdict == statistics.UNTESTABLE and row.note == note
    table = "\n".join(_conditions_table([row]))
    assert table.count("-0.059") == 1 and "| untestable: works_in_domain |" in table
    assert "| untestable: shift_hurts |" in table


def test_a_test_two_grids_make_on_shared_cells_counts_once(run_of, values, lower_ece):
    """Grid h copies grid g's cells bit for bit (as gp's ClariQ cells may be paper000's): the claim
    measured in both is one test. It enters Benjamini–Hochberg once (the adjusted p of a registry with
    it once), the second row names the first, and the verdict counts count it once; a grid whose
    values differ in one query is another test."""
    from rankuq.bench.findings.render import _counts

    records = {
        ("c", "bert", "ECE"): [values(0.10, 0.05, s) for s in range(3)],
        ("c", "ensemble", "ECE"): [values(0.09, 0.05, 10 + s) for s in range(3)],
    }
    g, h = run_of(records), run_of(records)
    h = replace(h, spec=h.spec.model_copy(update={"name": "h"}))
    other = replace(lower_ece, id="other")
    [once] = judge_all([assess(lower_ece, [g])])
    first, second = judge_all([assess(lower_ece, [g]), assess(replace(other, grid="h"), [h])])
    assert first.measured[0].digest == second.measured[0].digest != ""
    assert second.duplicate_of == "000-ece" and not first.duplicate_of
    assert first.measured[0].adjusted_p == second.measured[0].adjusted_p == once.measured[0].adjusted_p
    assert first.overall_adjusted_p == once.overall_adjusted_p
    table = "\n".join(_counts([first, second]))
    assert "| a test | 1 |" in table and "Counted once: 1 claim repeats the tests" in table
    # One query's value changed: another test, two in the family, both counted.
    changed = {key: [v.copy() for v in seeds] for key, seeds in records.items()}
    changed[("c", "ensemble", "ECE")][0][0] += 0.01
    first, second = judge_all([assess(lower_ece, [g]), assess(replace(other, grid="g"), [run_of(changed)])])
    assert first.measured[0].digest != second.measured[0].digest and not second.duplicate_of
    assert "| a test | 2 |" in "\n".join(_counts([first, second]))
