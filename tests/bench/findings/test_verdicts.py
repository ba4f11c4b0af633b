"""How a claim is judged (bench.findings.verdicts): the sides of a comparison aligned by query, the
effect from the paired bootstrap, the preconditions, and the verdicts over the registry, on small
hand-made per-query records whose effects are worked out below."""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import Claim
from rankuq.bench.findings.runs import Run
from rankuq.bench.findings.verdicts import aligned, assess, judge_all, measure, no_shift_condition
from rankuq.bench.probes.parts import QueryParts

SPEC, _ = parse_grid(
    {
        "name": "g",
        "tasks": ["wikiqa"],
        "methods": {"bm25": {}, "bert": {}, "ensemble": {}},
        "baseline": "bert",
    },
    "test grid",
)
QIDS = np.array([f"q{i}" for i in range(200)])


class Records:
    """Per-query records in memory: (condition, method, metric) → seed → parts."""

    def __init__(self, parts: dict[tuple[str, str, str], dict[int, QueryParts]]) -> None:
        self._parts = parts

    def parts(self, condition: str, method: str, metric: str) -> dict[int, QueryParts]:
        return self._parts.get((condition, method, metric), {})


def values(mean: float, noise: float, seed: int) -> np.ndarray:
    return mean + noise * np.random.default_rng(seed).standard_normal(QIDS.size)


def run_of(columns: dict[tuple[str, str, str], list[np.ndarray]], kinds=None, seeds=None) -> Run:
    """A run whose (condition, method, metric) has one mean-type parts table per seed."""
    parts = {
        key: {seed: QueryParts(QIDS, v[:, None], "mean") for seed, v in enumerate(per_seed)}
        for key, per_seed in columns.items()
    }
    conditions = sorted({c for c, _, _ in columns})
    kinds = kinds or {c: ("in-domain", "standard") for c in conditions}
    tested = {c: ("wikiqa", None) for c in conditions}
    table = seeds if seeds is not None else pd.DataFrame(columns=["condition", "method", "seed"])
    return Run(Path("runs/hand"), SPEC, table, pd.DataFrame(), kinds, None, Records(parts), tested)


LOWER_ECE = Claim(
    id="000-ece",
    grid="g",
    text="the ensemble lowers ECE",
    source="Penha & Hauff, 2021, Table 2",
    paper="−14 %",
    paper_effect=-0.14,
    method="ensemble",
    metric="ECE",
    scale="relative",
    expect="lower",
)


def test_the_sides_are_aligned_by_query_in_the_first_side_s_order():
    mine = {0: QueryParts(np.array(["a", "b", "c"]), np.array([[1.0], [2.0], [3.0]]), "mean")}
    theirs = {0: QueryParts(np.array(["c", "a", "x"]), np.array([[30.0], [10.0], [99.0]]), "mean")}
    rows, names = aligned([mine, theirs])
    assert names == ["mean", "mean"]
    np.testing.assert_array_equal(rows[0][0][:, 0], [1.0, 3.0])  # a and c, the queries both have
    np.testing.assert_array_equal(rows[1][0][:, 0], [10.0, 30.0])
    assert aligned([mine, {1: theirs[0]}]) is None  # a seed missing on one side


def test_a_relative_effect_is_the_seeds_mean_of_the_relative_difference():
    # ECE 0.10 for bert, 0.05 for the ensemble in every seed, small noise: d = (0.05 − 0.10) / 0.10 = −50 %
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
        }
    )
    m = measure(LOWER_ECE, run, "c")
    by_hand = np.mean(
        [
            (values(0.05, 0.01, 10 + s).mean() - values(0.10, 0.01, s).mean()) / values(0.10, 0.01, s).mean()
            for s in range(3)
        ]
    )
    assert m.effect is not None and m.effect.d == pytest.approx(by_hand, rel=1e-12)
    assert m.effect.low < m.effect.d < m.effect.high and m.effect.high < 0
    assert m.value == pytest.approx(0.05, abs=0.002) and m.reference == pytest.approx(0.10, abs=0.002)
    [row] = judge_all([assess(LOWER_ECE, [run])])
    # far beyond the paper's −14 %, significant after BH: reproduced
    assert row.verdict == statistics.REPRODUCED and row.measured[0].verdict == statistics.REPRODUCED


def test_noise_that_covers_zero_and_the_paper_s_effect_is_inconclusive_with_its_power():
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.2, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.095, 0.2, 10 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(LOWER_ECE, [run])])
    m = row.measured[0]
    assert m.effect.low < -0.14 and m.effect.high > 0  # covers both
    assert m.verdict == statistics.INCONCLUSIVE == row.verdict
    assert statistics.minimum_detectable_effect(m.effect) > 0.14


def test_a_tight_zero_is_smaller_than_reported_not_refuted():
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.001, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.10, 0.001, 10 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(LOWER_ECE, [run])])
    assert row.measured[0].effect.low > -0.14
    assert row.verdict == statistics.SMALLER


def test_a_ranker_below_bm25_makes_its_condition_untestable_with_the_reason():
    claim = replace(LOWER_ECE, preconditions=("above_bm25",))
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


def test_a_degenerate_risk_selection_is_untestable():
    claim = replace(
        LOWER_ECE,
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


def test_a_floor_is_judged_on_the_value_itself():
    claim = Claim(
        id="floor",
        grid="g",
        text="AP at least 0.70",
        source="this project",
        paper="0.70",
        paper_effect=None,
        method="bert",
        metric="AP",
        floor=0.70,
        expect="at least",
        sanity=True,
    )
    high = run_of({("c", "bert", "AP"): [values(0.75, 0.1, s) for s in range(3)]})
    low = run_of({("c", "bert", "AP"): [values(0.60, 0.1, s) for s in range(3)]})
    [above], [below] = judge_all([assess(claim, [high])]), judge_all([assess(claim, [low])])
    assert above.overall.d == pytest.approx(0.75, abs=0.02) and above.verdict == statistics.REPRODUCED
    assert below.verdict == statistics.REFUTED


def test_conditions_going_both_ways_are_mixed_and_others_pooled():
    both = run_of(
        {
            ("a", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("a", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
            ("b", "bert", "ECE"): [values(0.10, 0.01, 20 + s) for s in range(3)],
            ("b", "ensemble", "ECE"): [values(0.15, 0.01, 30 + s) for s in range(3)],
        }
    )
    [row] = judge_all([assess(LOWER_ECE, [both])])
    assert [m.verdict for m in row.measured] == [statistics.REPRODUCED, statistics.REFUTED]
    assert row.verdict == statistics.MIXED
    agree = run_of(
        {
            k: v
            for k, v in [
                (("a", "bert", "ECE"), [values(0.10, 0.01, s) for s in range(3)]),
                (("a", "ensemble", "ECE"), [values(0.05, 0.01, 10 + s) for s in range(3)]),
                (("b", "bert", "ECE"), [values(0.10, 0.01, 20 + s) for s in range(3)]),
                (("b", "ensemble", "ECE"), [values(0.06, 0.01, 30 + s) for s in range(3)]),
            ]
        }
    )
    [row] = judge_all([assess(LOWER_ECE, [agree])])
    assert row.verdict == statistics.REPRODUCED and isinstance(row.overall, statistics.Pooled)
    assert -0.5 < row.overall.d < -0.4  # between the conditions' −50 % and −40 %


def test_benjamini_hochberg_adjusts_over_the_registry():
    runs = [
        run_of(
            {
                ("c", "bert", "ECE"): [values(0.10, 0.05, s) for s in range(3)],
                ("c", "ensemble", "ECE"): [values(0.09, 0.05, 10 + s) for s in range(3)],
            }
        )
    ]
    claims = [replace(LOWER_ECE, id=f"c{i}") for i in range(4)]
    rows = judge_all([assess(claim, runs) for claim in claims])
    raw = rows[0].measured[0].effect.p
    adjusted = [row.measured[0].adjusted_p for row in rows]
    assert all(p == pytest.approx(raw) for p in adjusted)  # four equal p's: BH leaves them as they are
    assert not math.isnan(rows[0].overall_adjusted_p)


def test_the_no_shift_condition_tests_the_same_task_in_domain():
    run = run_of(
        {("plain", "bert", "AP"): [values(0.7, 0.1, 0)], ("shifted", "bert", "AP"): [values(0.6, 0.1, 1)]},
        kinds={"plain": ("in-domain", "standard"), "shifted": ("cross-domain", "standard")},
    )
    assert no_shift_condition(run, "shifted") == "plain"
