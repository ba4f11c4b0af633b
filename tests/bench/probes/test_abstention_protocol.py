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
from rankuq.bench.statistics.parts import STATISTICS, BatchStatistic

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


@pytest.mark.parametrize("n", [2, 3, 10, 11, 97])
def test_a_stack_of_resamples_gives_each_row_s_nauc_bit_for_bit(n: int) -> None:
    """The bootstrap scores nAUC on a stack of resamples at once (a BatchStatistic); each of its values
    is exactly that of the row alone, ties (in metric and confidence) and undefined rows included."""
    rng = np.random.default_rng(n)
    rows = np.column_stack([rng.random(n) > 0.6, np.round(rng.random(n) * 3)]).astype(float)
    rows[: n // 2, 1] = rng.random(n // 2)  # half the confidences untied
    stack = rows[rng.integers(0, n, size=(200, n))]
    nauc = STATISTICS["normalised_auc"]
    assert isinstance(nauc, BatchStatistic)
    alone = np.array([normalised_auc(r[:, 0], r[:, 1]).value for r in stack])
    np.testing.assert_array_equal(nauc.function(stack), alone)  # nan where nan, else the same bits
    assert np.isnan(alone).any() or n > 3  # the tiny stacks hold rows where the oracle equals random
    assert nauc(stack[0]) == alone[0] or np.isnan(alone[0])
