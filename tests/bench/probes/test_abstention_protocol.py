"""The abstention protocol by hand (rankuq.bench.probes.abstention_protocol): rates, ties,
trapezoids, nAUC."""

import itertools

import numpy as np
import pytest

from rankuq.bench.probes.abstention_protocol import (
    kept_means,
    normalised_auc,
    oracle_curve,
    performance_curve,
)

# Two failed queries (metric 0) among ten, listed in query order.
METRIC = np.array([0.0, 0.0, 1, 1, 1, 1, 1, 1, 1, 1])
ORACLE = [0.8, 8 / 9, 1, 1, 1, 1, 1, 1, 1]
WORST = [0.8, 7 / 9, 6 / 8, 5 / 7, 4 / 6, 3 / 5, 2 / 4, 1 / 3, 0 / 2]  # good queries abstained first


def trapezoid(curve: list[float]) -> float:
    return sum(0.1 * (a + b) / 2 for a, b in itertools.pairwise(curve))


def test_curves_abstain_on_floor_r_n_queries() -> None:
    np.testing.assert_allclose(oracle_curve(METRIC), ORACLE)
    np.testing.assert_allclose(performance_curve(METRIC, -METRIC), WORST)
    # N = 7: ⌊r·7⌋ = 0, 0, 1, 2, 2, 3, 4, 4, 5 queries abstained
    kept = kept_means(np.arange(7.0))
    np.testing.assert_allclose(kept, [3, 3, 3.5, 4, 4, 4.5, 5, 5, 5.5])


def test_ties_in_confidence_abstain_on_the_lower_qid_first() -> None:
    flat = np.zeros(10)
    np.testing.assert_allclose(performance_curve(METRIC, flat), ORACLE)  # failures come first
    np.testing.assert_allclose(performance_curve(METRIC[::-1], flat), WORST)


def test_normalised_auc_by_hand() -> None:
    random, oracle, worst = 0.8 * 0.8, trapezoid(ORACLE), trapezoid(WORST)
    best = normalised_auc(METRIC, METRIC)
    assert (best.value, best.oracle, best.random) == pytest.approx((1.0, oracle, random))
    assert normalised_auc(METRIC, -METRIC).value == pytest.approx((worst - random) / (oracle - random))
    assert normalised_auc(METRIC, -METRIC).value < 0  # harmful abstention
    assert np.isnan(normalised_auc(np.ones(10), np.arange(10.0)).value)  # oracle = random
