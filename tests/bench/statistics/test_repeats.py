"""The exact sign-flip test over timed repeats (bench.statistics.repeats): its p-values are
scipy's exact permutation test's, its smallest p is 2 / 2ⁿ, and its interval is the test inverted."""

import math
from typing import Literal

import numpy as np
import pytest
from scipy import stats

from rankuq.bench.statistics import ALPHA, MIN_REPEATS, claim_p, judge, sign_flip


@pytest.mark.parametrize("n", [3, 6, 10, 13])
def test_the_p_values_are_scipy_s_exact_permutation_test(n: int) -> None:
    x = np.random.default_rng(n).normal(0.4, 1.0, n)
    test = sign_flip(x)

    def exact(
        data: np.ndarray, alternative: Literal["two-sided", "less", "greater"]
    ) -> float:  # every one of the 2ⁿ sign patterns
        found = stats.permutation_test(
            (data,), np.mean, permutation_type="samples", n_resamples=2**n, alternative=alternative
        )
        return float(found.pvalue)

    assert test.p == pytest.approx(exact(x, "two-sided")) and test.d == pytest.approx(x.mean())
    above, below = exact(x - 0.2, "greater"), exact(x + 0.3, "less")
    assert test.one_sided_p(0.2, above=True) == pytest.approx(above)
    assert test.one_sided_p(-0.3, above=False) == pytest.approx(below)
    assert test.se == pytest.approx(np.std(x, ddof=1) / math.sqrt(n))


def test_the_smallest_p_fits_the_number_of_repeats() -> None:
    """Every repeat far on one side: p is 2 / 2ⁿ, below α from 6 repeats on, never from 5 or fewer;
    MIN_REPEATS gives 0.002."""
    for n in range(2, 12):
        test = sign_flip(np.linspace(5.0, 6.0, n))
        assert test.p == pytest.approx(2 / 2**n) == test.p_floor
        assert (test.p < ALPHA) == (n >= 6)
    assert sign_flip(np.ones(MIN_REPEATS) + np.arange(MIN_REPEATS) / 100).p == pytest.approx(0.001953125)


def test_the_interval_is_the_test_inverted_and_judges_as_the_p_does() -> None:
    """θ inside the 95 % interval exactly when the test at θ keeps p ≥ 0.05; with five repeats no θ is
    rejected (the interval is unbounded); the verdict a claim gets agrees with the interval."""
    x = np.random.default_rng(7).normal(1.0, 0.5, 10)
    test = sign_flip(x)
    low, high = test.interval()
    assert low < test.d < high
    for theta in np.linspace(low - 1, high + 1, 41):
        inside = low <= theta <= high
        assert (test.two_sided_p(theta) >= ALPHA) == inside or min(abs(theta - low), abs(theta - high)) < 1e-6
    low90, high90 = test.interval(0.90)
    assert low < low90 < high90 < high
    assert sign_flip(x[:5]).interval() == (-math.inf, math.inf)
    # Decisively above 0 with ten repeats: reproduced, and the claim's p is the exact test's.
    assert judge(test, "higher", 0.5) == "reproduced" and claim_p(test, "higher") == test.p
    with pytest.raises(ValueError, match="finite values"):
        sign_flip([1.0, math.nan])
