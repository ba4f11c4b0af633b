"""The findings' statistical procedure (rankuq.bench.findings.statistics) on worked examples, each
checked against an independent computation (hand arithmetic, the classical paired formulas, scipy)."""

import math

import numpy as np
import pytest
from scipy import stats

from rankuq.bench.findings import statistics as st
from rankuq.bench.findings.statistics import (
    INCONCLUSIVE,
    MIXED,
    NOT_MEASURED,
    REFUTED,
    REPRODUCED,
    SMALLER,
    UNTESTABLE,
    Effect,
    Pooled,
    benjamini_hochberg,
    judge,
    minimum_detectable_effect,
    overall,
    paired_bootstrap,
    pooled,
    scale_for_power,
)

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)  # 2.8016


def _mean(rows: np.ndarray) -> float:
    return float(rows[:, 0].mean())


def _noisy_pair(n_seeds: int, n: int, shift: float, rng: np.random.Generator) -> tuple[list, list]:
    """Method and reference per seed: noisy queries (sd 1), the method `shift` higher plus noise."""
    reference = [rng.normal(0.5, 1.0, (n, 1)) for _ in range(n_seeds)]
    method = [r + shift + rng.normal(0, 0.3, (n, 1)) for r in reference]
    return method, reference


def test_point_estimate_is_the_mean_of_the_seeds_contrasts() -> None:
    a = [np.array([[1.0], [2.0], [3.0]]), np.array([[2.0], [4.0]])]
    b = [np.array([[1.0], [1.0], [1.0]]), np.array([[1.0], [3.0]])]
    # seed 0: means 2 and 1, relative (2 − 1)/1 = 1; seed 1: 3 and 2, 0.5; d = 0.75.
    effect = paired_bootstrap([a, b], [st.mean(), st.mean()], st.relative(), resamples=200)
    assert effect.d == pytest.approx(0.75)
    assert effect.n_seeds == 2 and effect.n_queries == (3, 2) and effect.mean_queries == 2.5
    assert list(effect.seed_contrasts) == pytest.approx([1.0, 0.5])
    # Best of several: v0 − max(v1, v2); seed 0: 2 − max(1, 2.5), seed 1: 3 − max(2, 1): d = (−0.5 + 1)/2.
    c = [np.full((3, 1), 2.5), np.full((2, 1), 1.0)]
    best = paired_bootstrap([a, b, c], [_mean] * 3, lambda v: v[0] - v[1:].max(), resamples=200)
    assert best.d == pytest.approx(0.25)


def test_vectorised_and_general_paths_agree_on_the_same_draws() -> None:
    rng = np.random.default_rng(3)
    method, reference = _noisy_pair(3, 50, 0.1, rng)
    for design in ("nested", "crossed"):
        fast = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 500, 7, design)
        slow = paired_bootstrap([method, reference], [_mean] * 2, lambda v: v[0] - v[1], 500, 7, design)
        np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=0, atol=1e-12)
        assert (fast.low, fast.high, fast.p) == pytest.approx((slow.low, slow.high, slow.p), abs=1e-12)
    # A ratio of means (two parts per query) and the best-of contrast, vectorised against looped.
    parts = [np.column_stack([rng.random(40), rng.random(40) + 0.5]) for _ in range(2)]
    other = [np.column_stack([rng.random(40), rng.random(40) + 0.5]) for _ in range(2)]
    third = [np.column_stack([rng.random(40), rng.random(40) + 0.5]) for _ in range(2)]
    ratio = st.ratio_of_means()

    def looped(rows: np.ndarray) -> float:
        return float(rows[:, 0].sum() / rows[:, 1].sum())

    fast = paired_bootstrap([parts, other, third], [ratio] * 3, st.over_best(), 300, 1)
    slow = paired_bootstrap([parts, other, third], [looped] * 3, lambda v: v[0] - v[1:].max(), 300, 1)
    np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=0, atol=1e-12)

    # A statistic of the rows themselves (the value-weighted mean of the top half by confidence),
    # batched over a leading axis of resamples against one call per resample.
    def top_half(rows: np.ndarray) -> float:
        order = np.argsort(-rows[:, 0], kind="stable")[: len(rows) // 2]
        return float(rows[order, 1].mean())

    def top_half_batch(rows: np.ndarray) -> np.ndarray:
        order = np.argsort(-rows[..., 0], axis=-1, kind="stable")[..., : rows.shape[-2] // 2]
        return np.take_along_axis(rows[..., 1], order, axis=-1).mean(axis=-1)

    batched = st.BatchStatistic(top_half_batch)
    assert batched(parts[0]) == pytest.approx(top_half(parts[0]))
    fast = paired_bootstrap([parts, other], [batched] * 2, st.difference(), 300, 2, "crossed")
    slow = paired_bootstrap([parts, other], [top_half] * 2, lambda v: v[0] - v[1], 300, 2, "crossed")
    np.testing.assert_allclose(fast.replicates, slow.replicates, rtol=0, atol=1e-12)


def test_one_seed_matches_the_classical_paired_standard_error_and_t_interval() -> None:
    rng = np.random.default_rng(11)
    n = 2000
    method, reference = _noisy_pair(1, n, 0.015, rng)
    effect = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference())
    d_q = (method[0] - reference[0])[:, 0]
    assert effect.d == pytest.approx(d_q.mean())
    classical = d_q.std(ddof=1) / math.sqrt(n)
    assert effect.se == pytest.approx(classical, rel=0.04)
    t_low, t_high = stats.ttest_1samp(d_q, 0).confidence_interval(0.95)
    assert abs(effect.low - t_low) < 0.1 * classical
    assert abs(effect.high - t_high) < 0.1 * classical
    # The percentile p against the t-test's.
    assert effect.p == pytest.approx(stats.ttest_1samp(d_q, 0).pvalue, rel=0.5)


def test_the_seed_level_widens_the_interval_when_seeds_disagree() -> None:
    rng = np.random.default_rng(5)
    method, reference = _noisy_pair(2, 300, 0.0, rng)
    method = [method[0] + 0.3, method[1] - 0.1]  # seed 0: d ≈ +0.3, seed 1: d ≈ −0.1
    two_seeds = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 4000)
    pooled_queries = paired_bootstrap(
        [[np.vstack(method)], [np.vstack(reference)]], [st.mean()] * 2, st.difference(), 4000
    )
    assert two_seeds.d == pytest.approx(pooled_queries.d)
    assert (two_seeds.high - two_seeds.low) > 2 * (pooled_queries.high - pooled_queries.low)
    assert pooled_queries.p < 0.05 < two_seeds.p
    # The variance split sees it: almost all of d's variance is the seeds'.
    assert two_seeds.between_variance > 5 * two_seeds.within_variance


def test_pairing_a_constant_shift_on_noisy_queries_gives_a_tiny_interval_and_the_p_floor() -> None:
    rng = np.random.default_rng(2)
    reference = [rng.normal(0, 1, (100, 1)) for _ in range(3)]
    method = [r + 0.01 for r in reference]
    effect = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), resamples=999)
    assert effect.d == pytest.approx(0.01)
    assert effect.high - effect.low < 1e-12 and effect.se < 1e-12
    assert effect.p == effect.p_floor == pytest.approx(2 / 1000) and effect.p_at_floor
    assert effect.p_text == "p < 2e-03"
    # Unpaired (each side resampled on its own) the same data shows nothing: a spread of about 2/sqrt(300).
    alone = paired_bootstrap([reference], [st.mean()], st.value(), resamples=999)
    assert alone.high - alone.low > 0.1


def test_p_value_counts_the_replicates_on_the_other_side() -> None:
    rng = np.random.default_rng(8)
    method, reference = _noisy_pair(3, 60, 0.04, rng)
    effect = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), resamples=2000)
    assert effect.d > 0
    crossed = np.count_nonzero(effect.replicates <= 0)
    assert effect.p == pytest.approx(min(1, 2 * (1 + crossed) / 2001))
    assert not effect.p_at_floor and effect.p_text.startswith("p = ")
    zero = paired_bootstrap([reference, reference], [st.mean()] * 2, st.difference(), resamples=100)
    assert zero.d == 0 and zero.p == 1 and (zero.low, zero.high) == (0, 0)


def test_same_seed_same_numbers() -> None:
    rng = np.random.default_rng(4)
    method, reference = _noisy_pair(3, 80, 0.05, rng)
    args = ([method, reference], [st.mean()] * 2, st.difference(), 1000)
    first, again, other = (
        paired_bootstrap(*args, seed=1),
        paired_bootstrap(*args, seed=1),
        paired_bootstrap(*args, seed=2),
    )
    np.testing.assert_array_equal(first.replicates, again.replicates)
    assert (first.low, first.high, first.p, first.se) == (again.low, again.high, again.p, again.se)
    assert first.low != other.low


def test_crossed_design_shares_the_query_resample_across_seeds() -> None:
    rng = np.random.default_rng(6)
    # Every seed scores the same queries with nearly the same per-query difference: the query noise
    # does not average out over seeds; nested counts it as independent and is narrower by about sqrt(3).
    d_q = rng.normal(0.05, 1.0, (200, 1))
    reference = [rng.normal(0, 1, (200, 1)) for _ in range(3)]
    method = [r + d_q + rng.normal(0, 0.01, (200, 1)) for r in reference]
    nested = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 4000)
    crossed = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 4000, design="crossed")
    assert crossed.se == pytest.approx(d_q.std(ddof=1) / math.sqrt(200), rel=0.06)
    assert crossed.se / nested.se == pytest.approx(math.sqrt(3), rel=0.1)
    with pytest.raises(ValueError, match="same queries"):
        paired_bootstrap([[d_q, d_q[:50]]], [st.mean()], st.value(), 10, design="crossed")


def test_undefined_resamples_are_dropped_and_counted() -> None:
    # A ratio whose denominator is non-zero in one query only: resamples without it are 0 / 0.
    rows = np.column_stack([np.arange(10.0), np.r_[1.0, np.zeros(9)]])
    effect = paired_bootstrap([[rows]], [st.ratio_of_means()], st.value(), resamples=500)
    assert 0 < effect.dropped < 500 and effect.resamples == 500 - effect.dropped
    assert np.isfinite(effect.replicates).all()


def test_benjamini_hochberg_by_hand() -> None:
    # m = 4 (the nan does not count): sorted 0.005, 0.01, 0.03, 0.04 × 4/rank = 0.02, 0.02, 0.04, 0.04.
    adjusted = benjamini_hochberg([0.01, 0.04, 0.03, 0.005, math.nan])
    np.testing.assert_allclose(adjusted[:4], [0.02, 0.04, 0.04, 0.02])
    assert math.isnan(adjusted[4])
    # Monotone step-up: 0.02 × 3/2 = 0.03 is capped by the later 0.025 × 3/3.
    np.testing.assert_allclose(benjamini_hochberg([0.001, 0.02, 0.025]), [0.003, 0.025, 0.025])
    assert np.isnan(benjamini_hochberg([math.nan])).all() and benjamini_hochberg([]).size == 0


def _normal(d: float, se: float) -> Pooled:
    """A constructed estimate: 95 % CI d ± 1.96 se, 90 % d ± 1.645 se, p two-sided normal."""
    return Pooled(d, se, float(2 * stats.norm.sf(abs(d) / se)), math.nan, math.nan, 1, (), ())


# d, se, expect, paper effect, margin, adjusted p, verdict (CI = d ± 1.96 se; 90 % = d ± 1.645 se)
JUDGED = [
    (0.30, 0.05, "higher", 0.3, None, None, REPRODUCED),  # [0.20, 0.40]
    (0.05, 0.02, "higher", 0.3, None, None, REPRODUCED),  # [0.011, 0.089]: smaller, but shown
    (-0.30, 0.05, "higher", 0.3, None, None, REFUTED),
    (0.05, 0.05, "higher", 0.3, None, None, SMALLER),  # [−0.048, 0.148] stops short of 0.3
    (0.10, 0.15, "higher", 0.3, None, None, INCONCLUSIVE),  # [−0.19, 0.39] covers 0 and 0.3
    (0.30, 0.05, "higher", 0.3, None, 0.2, INCONCLUSIVE),  # CI excludes 0, adjusted p does not
    (0.10, 0.03, "higher", 0.3, None, 0.2, SMALLER),  # [0.04, 0.16]: not significant, short of 0.3
    (0.60, 0.10, "higher", 0.3, None, 0.2, INCONCLUSIVE),  # [0.40, 0.80]: beyond the paper's, not short
    (-0.30, 0.05, "higher", 0.3, None, 0.2, SMALLER),  # the other way, not significant after BH
    (0.10, 0.15, "higher", None, None, None, INCONCLUSIVE),
    (0.05, 0.05, "higher", None, None, None, INCONCLUSIVE),  # no paper effect: no "smaller"
    (-0.30, 0.05, "lower", -0.3, None, None, REPRODUCED),
    (0.20, 0.05, "lower", -0.3, None, None, REFUTED),
    (-0.05, 0.05, "lower", -0.3, None, None, SMALLER),
    (-0.10, 0.15, "lower", -0.3, None, None, INCONCLUSIVE),
    (0.00, 0.03, "within", None, 0.1, None, REPRODUCED),  # 90 % [−0.049, 0.049] inside ±0.1
    (0.05, 0.03, "within", None, 0.1, None, REPRODUCED),  # 90 % [0.0007, 0.099] inside
    (0.08, 0.03, "within", None, 0.1, None, INCONCLUSIVE),  # 90 % [0.031, 0.129] straddles 0.1
    (0.00, 0.08, "within", None, 0.1, None, INCONCLUSIVE),  # 90 % [−0.13, 0.13] covers the margin
    (0.30, 0.05, "within", None, 0.1, None, REFUTED),  # 95 % [0.20, 0.40] outside
    (-0.30, 0.05, "within", None, 0.1, None, REFUTED),
    (0.15, 0.05, "within", None, 0.1, None, INCONCLUSIVE),  # 95 % [0.052, 0.248] straddles 0.1
    (0.00, 0.03, "within", None, 0.1, 0.2, INCONCLUSIVE),  # inside, but the adjusted TOST p is not
    (0.80, 0.02, "at least", None, 0.7, None, REPRODUCED),  # 95 % [0.76, 0.84] above 0.7
    (0.60, 0.02, "at least", None, 0.7, None, REFUTED),
    (0.71, 0.02, "at least", None, 0.7, None, INCONCLUSIVE),  # [0.67, 0.75]
    (math.nan, 0.02, "higher", 0.3, None, None, NOT_MEASURED),
]


@pytest.mark.parametrize(("d", "se", "expect", "paper", "margin", "adjusted", "verdict"), JUDGED)
def test_judge(
    d: float,
    se: float,
    expect: st.Expect,
    paper: float | None,
    margin: float | None,
    adjusted: float | None,
    verdict: str,
) -> None:
    assert judge(_normal(d, se), expect, paper, margin, adjusted) == verdict


def test_judge_rejects_a_paper_effect_against_its_direction() -> None:
    with pytest.raises(ValueError, match="does not go"):
        judge(_normal(0.1, 0.01), "lower", 0.3)
    with pytest.raises(ValueError, match="margin"):
        judge(_normal(0.1, 0.01), "within", None)


def test_tost_p_agrees_with_the_90_interval_on_a_bootstrap_effect() -> None:
    rng = np.random.default_rng(9)
    method, reference = _noisy_pair(3, 200, 0.0, rng)
    effect = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 4000)
    for margin in (0.02, 0.05, 0.1, 0.2):
        inside = -margin < effect.low90 and effect.high90 < margin
        assert (st.claim_p(effect, "within", margin) < 0.05) == inside
        assert (judge(effect, "within", None, margin) == REPRODUCED) == inside
    floor = effect.low - 0.01
    assert (
        st.claim_p(effect, "at least", floor) < 0.05 and judge(effect, "at least", None, floor) == REPRODUCED
    )
    assert (effect.p < 0.05) == (effect.low > 0 or effect.high < 0)


def test_pooled_is_the_inverse_variance_mean() -> None:
    # w = 1/0.1², 1/0.2² = 100, 25: d = (100·0.1 + 25·0.3)/125 = 0.14, SE = 1/sqrt(125);
    # Q = 100·0.04² + 25·0.16² = 0.8 on 1 df. A zero-SE condition is left out.
    result = pooled([_normal(0.1, 0.1), _normal(0.3, 0.2), Pooled(0.5, 0.0, 0.0, 0, 0, 1, (), ())])
    assert result.d == pytest.approx(0.14) and result.se == pytest.approx(1 / math.sqrt(125))
    assert result.q == pytest.approx(0.8) and result.q_p == pytest.approx(stats.chi2.sf(0.8, 1))
    assert result.p == pytest.approx(2 * stats.norm.sf(0.14 * math.sqrt(125)))
    assert result.used == (0, 1) and result.weights == pytest.approx((100, 25))
    assert result.interval() == pytest.approx(
        (0.14 - 1.959964 / math.sqrt(125), 0.14 + 1.959964 / math.sqrt(125))
    )
    assert math.isnan(pooled([]).d)


def test_overall_is_mixed_only_when_conditions_significantly_disagree() -> None:
    up, down, small = _normal(0.3, 0.05), _normal(-0.3, 0.05), _normal(0.05, 0.02)
    assert overall([up, down], [REPRODUCED, REFUTED], "higher", 0.3) == MIXED
    # Heterogeneous (Q p ≈ 1e-6) but every condition goes the paper's way: the pooled estimate decides.
    assert overall([up, small], [REPRODUCED, REPRODUCED], "higher", 0.3) == REPRODUCED
    # Untestable conditions do not enter; one left: its own verdict.
    assert overall([up, down], [REPRODUCED, UNTESTABLE], "higher", 0.3) == REPRODUCED
    assert overall([up], [UNTESTABLE], "higher", 0.3) == UNTESTABLE
    assert overall([], [], "higher", 0.3) == NOT_MEASURED
    # Two inconclusive conditions whose pooled estimate is significant: reproduced, not a vote.
    weak = _normal(0.12, 0.1)  # [−0.076, 0.316]; four of them pool to SE 0.05: [0.022, 0.218]
    assert judge(weak, "higher", 0.3) == INCONCLUSIVE
    assert overall([weak] * 4, [INCONCLUSIVE] * 4, "higher", 0.3) == REPRODUCED


def _effect(
    se: float, between: float, within: float, design: st.Design, seeds: int = 3, queries: int = 100
) -> Effect:
    """A constructed effect: only the numbers scale_for_power reads matter."""
    empty = np.array([])
    return Effect(
        0.0,
        -1,
        1,
        -1,
        1,
        se,
        1.0,
        1.0,
        False,
        seeds,
        (queries,) * seeds,
        design,
        empty,
        empty,
        between,
        within,
        True,
    )


def test_minimum_detectable_effect_and_scale_for_power() -> None:
    assert minimum_detectable_effect(_normal(0.0, 0.01)) == pytest.approx(0.028016, abs=1e-6)
    # SE 0.02 against a target of 0.02: factor = Z² = 7.849; room 1/7.849 = 0.1274.
    factor = Z**2
    nested = scale_for_power(_effect(0.02, 0.25, 0.75, "nested"), 0.02)
    assert nested.factor == pytest.approx(factor) and nested.between_share == pytest.approx(0.25)
    assert nested.seeds == math.ceil(3 * factor) == 24
    assert nested.queries is None  # the seeds' part 0.25 alone exceeds the room
    few = scale_for_power(_effect(0.02, 0.05, 0.95, "nested"), 0.02)
    assert few.queries == math.ceil(100 * 0.95 / (1 / factor - 0.05)) == 1228
    crossed = scale_for_power(_effect(0.02, 0.05, 0.95, "crossed"), 0.02)
    assert crossed.seeds is None and crossed.queries == 1228  # more seeds cannot beat the queries' part
    easy = scale_for_power(_effect(0.02, 0.05, 0.95, "crossed"), 0.1)  # factor Z²/25 = 0.314
    assert easy.seeds == math.ceil(3 * 0.05 / (25 / factor - 0.95)) == 1
    assert easy.queries == math.ceil(100 * 0.95 / (25 / factor - 0.05)) == 31
    none = scale_for_power(_effect(0.02, 0.05, 0.95, "nested"), 0.0)
    assert none.factor == math.inf and none.seeds is None and none.queries is None


def test_scale_for_power_predicts_the_standard_error_of_more_queries() -> None:
    rng = np.random.default_rng(12)
    method, reference = _noisy_pair(1, 100, 0.0, rng)
    small = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 2000)
    target = 0.02
    scale = scale_for_power(small, target)
    assert scale.queries == math.ceil(100 * scale.factor)  # one seed: all variance is the queries'
    method, reference = _noisy_pair(1, scale.queries, 0.0, rng)
    large = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 2000)
    assert minimum_detectable_effect(large) == pytest.approx(target, rel=0.12)
