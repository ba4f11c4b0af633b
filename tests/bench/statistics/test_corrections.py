"""The corrections of a family of p-values: worked values, and BH against scipy's own."""

import numpy as np
import pytest
from scipy import stats

from rankuq.bench.statistics.corrections import corrected
from rankuq.errors import RankuqError


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # Holm: sorted .01 .03 .04 times 3 2 1 = .03 .06 .04, made non-decreasing: .03 .06 .06
        ("holm", [0.03, 0.06, 0.06, np.nan]),
        # BH: p_(k)·m/k = .03 .045 .04, the minimum from the top down: .03 .04 .04
        ("bh", [0.03, 0.04, 0.04, np.nan]),
    ],
)
def test_corrections_have_their_worked_values(method, expected):
    np.testing.assert_allclose(corrected(np.array([0.01, 0.04, 0.03, np.nan]), method), expected)
    assert corrected(np.array([0.5, 0.9]), "holm").tolist() == [1.0, 1.0]  # capped at 1


def test_an_unknown_correction_is_refused():
    with pytest.raises(RankuqError, match="unknown correction 'bonferroni'; valid: bh, holm"):
        corrected(np.array([0.1]), "bonferroni")


@pytest.mark.parametrize("size", [1, 2, 7, 500])
def test_bh_is_scipys_false_discovery_control(size):
    """Ties, p-values of 1 and NaN (no test) included; NaN stays where it was."""
    rng = np.random.default_rng(size)
    p = np.round(rng.random(size) ** 3, 2)
    p[rng.random(size) < 0.2] = np.nan
    tested = ~np.isnan(p)
    out = corrected(p, "bh")
    assert np.isnan(out[~tested]).all()
    np.testing.assert_allclose(out[tested], stats.false_discovery_control(p[tested], method="bh"), rtol=1e-12)
