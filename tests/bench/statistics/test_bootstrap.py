"""The paired two-level bootstrap (rankuq.bench.statistics.bootstrap) and its vectorised
statistics and contrasts (statistics.contrasts) on worked examples, each checked against an
independent computation (hand arithmetic, the classical paired formulas, scipy)."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from rankuq.bench import statistics as st
from rankuq.bench.statistics import paired_bootstrap


def _mean(rows: np.ndarray) -> float:
    return float(rows[:, 0].mean())


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


@pytest.mark.parametrize("design", ["nested", "crossed"])
def test_pooled_values_give_a_ratio_of_means_over_the_seeds(design: st.Design) -> None:
    """pool="values": d = (mean of a's seed values − mean of b's) / mean of b's, so one seed whose
    reference is near 0 (+900 % alone) cannot drive d; every replicate is such a ratio too."""
    rng = np.random.default_rng(3)
    b = [np.full((50, 1), 0.2) + rng.normal(0, 0.01, (50, 1)) for _ in range(2)]
    b.append(np.full((50, 1), 0.02) + rng.normal(0, 0.001, (50, 1)))
    a = [rows + 0.18 for rows in b]
    by_hand = (np.mean([r.mean() for r in a]) - np.mean([r.mean() for r in b])) / np.mean(
        [r.mean() for r in b]
    )
    ratio = paired_bootstrap([a, b], [st.mean()] * 2, st.relative(), 500, design=design, pool="values")
    assert ratio.d == pytest.approx(by_hand) and ratio.d < 2
    of_ratios = paired_bootstrap([a, b], [st.mean()] * 2, st.relative(), 500, design=design)
    assert of_ratios.d > 3  # (0.9 + 0.9 + 9) / 3: the near-zero seed dominates
    # (A replicate that draws the near-zero seed three times is +900 % still: the seeds' spread.)
    assert ratio.low <= ratio.d <= ratio.high and ratio.low < of_ratios.low
    # An absolute contrast is linear: both pools give the same d and the same replicates.
    same = [
        paired_bootstrap([a, b], [st.mean()] * 2, st.difference(), 300, design=design, pool=p)
        for p in ("contrasts", "values")
    ]
    assert same[0].d == pytest.approx(same[1].d)
    np.testing.assert_allclose(same[0].replicates, same[1].replicates)


def test_a_relative_effect_over_a_zero_reference_has_no_estimate_and_no_warning() -> None:
    """Seed 1's reference mean is 0: its relative d is undefined, so is the mean over seeds; the
    row reads "no finite estimate" (no interval, no test), and nothing is printed on the way."""
    a = [np.array([[1.0], [2.0]]), np.array([[1.0], [1.0]])]
    b = [np.array([[1.0], [1.0]]), np.array([[0.0], [0.0]])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effect = paired_bootstrap([a, b], [st.mean(), st.mean()], st.relative(), resamples=50)
    assert effect.seed_contrasts[0] == pytest.approx(0.5) and math.isinf(effect.seed_contrasts[1])
    assert not math.isfinite(effect.d) and math.isnan(effect.low) and math.isnan(effect.p)


def test_vectorised_and_general_paths_agree_on_the_same_draws(noisy_pair) -> None:
    rng = np.random.default_rng(3)
    method, reference = noisy_pair(3, 50, 0.1, rng)
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


def test_one_seed_matches_the_classical_paired_standard_error_and_t_interval(noisy_pair) -> None:
    rng = np.random.default_rng(11)
    n = 2000
    method, reference = noisy_pair(1, n, 0.015, rng)
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


def test_the_seed_level_widens_the_interval_when_seeds_disagree(noisy_pair) -> None:
    rng = np.random.default_rng(5)
    method, reference = noisy_pair(2, 300, 0.0, rng)
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


def test_p_value_counts_the_replicates_on_the_other_side(noisy_pair) -> None:
    rng = np.random.default_rng(8)
    method, reference = noisy_pair(3, 60, 0.04, rng)
    effect = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), resamples=2000)
    assert effect.d > 0
    crossed = np.count_nonzero(effect.replicates <= 0)
    assert effect.p == pytest.approx(min(1, 2 * (1 + crossed) / 2001))
    assert not effect.p_at_floor and effect.p_text.startswith("p = ")
    zero = paired_bootstrap([reference, reference], [st.mean()] * 2, st.difference(), resamples=100)
    assert zero.d == 0 and zero.p == 1 and (zero.low, zero.high) == (0, 0)


def test_same_seed_same_numbers(noisy_pair) -> None:
    rng = np.random.default_rng(4)
    method, reference = noisy_pair(3, 80, 0.05, rng)
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
