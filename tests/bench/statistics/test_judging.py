"""The verdicts (rankuq.bench.statistics.judging): Benjamini–Hochberg by hand, ``judge`` on
constructed normal estimates, the TOST p against the 90 % interval, pooling and ``overall``."""

import math

import numpy as np
import pytest
from scipy import stats

from rankuq.bench import statistics as st
from rankuq.bench.statistics import (
    INCONCLUSIVE,
    MIXED,
    NOT_MEASURED,
    OPPOSITE,
    REFUTED,
    REPRODUCED,
    SMALLER,
    UNTESTABLE,
    Pooled,
    benjamini_hochberg,
    judge,
    overall,
    paired_bootstrap,
    pooled,
)


def test_benjamini_hochberg_by_hand() -> None:
    # m = 4 (the nan does not count): sorted 0.005, 0.01, 0.03, 0.04 × 4/rank = 0.02, 0.02, 0.04, 0.04.
    adjusted = benjamini_hochberg([0.01, 0.04, 0.03, 0.005, math.nan])
    np.testing.assert_allclose(adjusted[:4], [0.02, 0.04, 0.04, 0.02])
    assert math.isnan(adjusted[4])
    # Monotone step-up: 0.02 × 3/2 = 0.03 is capped by the later 0.025 × 3/3.
    np.testing.assert_allclose(benjamini_hochberg([0.001, 0.02, 0.025]), [0.003, 0.025, 0.025])
    assert np.isnan(benjamini_hochberg([math.nan])).all() and benjamini_hochberg([]).size == 0


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
    (-0.30, 0.05, "higher", 0.3, None, 0.2, OPPOSITE),  # the other way, not significant after BH
    (-0.05, 0.05, "higher", 0.3, None, None, OPPOSITE),  # [−0.148, 0.048]: never "smaller"
    (-0.05, 0.20, "higher", 0.3, None, None, INCONCLUSIVE),  # the other way, but covers 0.3
    (0.05, 0.05, "lower", -0.3, None, None, OPPOSITE),
    (-0.05, 0.05, "higher", None, None, None, INCONCLUSIVE),  # no paper effect: nothing to exclude
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
    (0.30, 0.05, "within", None, 0.1, 0.2, INCONCLUSIVE),  # outside, but the adjusted p is not
    (0.80, 0.02, "at least", None, 0.7, None, REPRODUCED),  # 95 % [0.76, 0.84] above 0.7
    (0.60, 0.02, "at least", None, 0.7, None, REFUTED),
    (0.71, 0.02, "at least", None, 0.7, None, INCONCLUSIVE),  # [0.67, 0.75]
    (0.60, 0.02, "at least", None, 0.7, 0.2, INCONCLUSIVE),  # below, but the adjusted p is not
    # a ceiling mirrors a floor (paper 000's in-domain ECE of at most 0.036)
    (0.016, 0.005, "at most", None, 0.036, None, REPRODUCED),  # 95 % [0.006, 0.026] below 0.036
    (0.150, 0.02, "at most", None, 0.036, None, REFUTED),  # [0.11, 0.19] above
    (0.040, 0.01, "at most", None, 0.036, None, INCONCLUSIVE),  # [0.020, 0.060] straddles it
    (0.016, 0.005, "at most", None, 0.036, 0.2, INCONCLUSIVE),  # below, but the adjusted p is not
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
    normal,
) -> None:
    assert judge(normal(d, se), expect, paper, margin, adjusted) == verdict


def test_judge_rejects_a_paper_effect_against_its_direction(normal) -> None:
    with pytest.raises(ValueError, match="does not go"):
        judge(normal(0.1, 0.01), "lower", 0.3)
    with pytest.raises(ValueError, match="margin"):
        judge(normal(0.1, 0.01), "within", None)


def test_tost_p_agrees_with_the_90_interval_on_a_bootstrap_effect(noisy_pair) -> None:
    rng = np.random.default_rng(9)
    method, reference = noisy_pair(3, 200, 0.0, rng)
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


def test_the_decisive_p_of_a_floor_or_margin_is_the_test_on_the_estimates_side(normal) -> None:
    """Below a floor or outside a margin, the p is that test's (small), not the reproducing test's 1."""
    below = normal(0.60, 0.02)  # the floor 0.7: 5 SE below
    assert st.claim_p(below, "at least", 0.7) < 1e-4
    assert st.claim_p(normal(0.80, 0.02), "at least", 0.7) < 1e-4
    assert st.claim_p(normal(0.30, 0.05), "within", 0.1) < 1e-4  # 4 SE above the margin
    assert st.claim_p(normal(-0.30, 0.05), "within", 0.1) < 1e-4
    assert st.claim_p(normal(0.0, 0.03), "within", 0.1) < 0.01  # inside: the TOST p


def test_pooled_is_the_inverse_variance_mean(normal) -> None:
    # w = 1/0.1², 1/0.2² = 100, 25: d = (100·0.1 + 25·0.3)/125 = 0.14, SE = 1/sqrt(125);
    # Q = 100·0.04² + 25·0.16² = 0.8 on 1 df. A zero-SE condition is left out.
    result = pooled([normal(0.1, 0.1), normal(0.3, 0.2), Pooled(0.5, 0.0, 0.0, 0, 0, 1, (), ())])
    assert result.d == pytest.approx(0.14) and result.se == pytest.approx(1 / math.sqrt(125))
    assert result.q == pytest.approx(0.8) and result.q_p == pytest.approx(stats.chi2.sf(0.8, 1))
    assert result.p == pytest.approx(2 * stats.norm.sf(0.14 * math.sqrt(125)))
    assert result.used == (0, 1) and result.weights == pytest.approx((100, 25))
    assert result.interval() == pytest.approx(
        (0.14 - 1.959964 / math.sqrt(125), 0.14 + 1.959964 / math.sqrt(125))
    )
    assert math.isnan(pooled([]).d)


def test_overall_is_mixed_only_when_conditions_disagree_in_direction(normal) -> None:
    up, down, small = normal(0.3, 0.05), normal(-0.3, 0.05), normal(0.05, 0.02)
    assert overall([up, down], [REPRODUCED, REFUTED], "higher", 0.3) == MIXED
    # Heterogeneous (Q p ≈ 1e-6) but every CI above 0: the pooled verdict stands, not mixed.
    assert pooled([up, small]).q_p < 1e-5
    assert overall([up, small], [REPRODUCED, REPRODUCED], "higher", 0.3) == REPRODUCED
    # One condition's CI covers 0: no disagreement in direction, however far apart (Q p small).
    assert overall([up, normal(-0.1, 0.1)], [REPRODUCED, INCONCLUSIVE], "higher", 0.3) != MIXED
    # A floor claim's direction is read against its floor, not 0: 0.75 and 0.65 around 0.7.
    above, below = normal(0.75, 0.01), normal(0.65, 0.01)
    assert overall([above, below], [REPRODUCED, REFUTED], "at least", None, margin=0.7) == MIXED
    assert overall([above, normal(0.9, 0.01)], [REPRODUCED] * 2, "at least", None, margin=0.7) == REPRODUCED
    # ... and a ceiling claim's against its ceiling: 0.016 below 0.036 and 0.15 above disagree.
    low_ece, high_ece = normal(0.016, 0.005), normal(0.15, 0.02)
    assert overall([low_ece, high_ece], [REPRODUCED, REFUTED], "at most", None, margin=0.036) == MIXED
    assert overall([high_ece, normal(0.1, 0.01)], [REFUTED] * 2, "at most", None, margin=0.036) == REFUTED
    # Homogeneous (Q p ≈ 0.3): the pooled estimate decides.
    assert overall([up, normal(0.22, 0.05)], [REPRODUCED, REPRODUCED], "higher", 0.3) == REPRODUCED
    # Untestable conditions do not enter; one left: its own verdict.
    assert overall([up, down], [REPRODUCED, UNTESTABLE], "higher", 0.3) == REPRODUCED
    assert overall([up], [UNTESTABLE], "higher", 0.3) == UNTESTABLE
    assert overall([], [], "higher", 0.3) == NOT_MEASURED
    # Two inconclusive conditions whose pooled estimate is significant: reproduced, not a vote.
    weak = normal(0.12, 0.1)  # [−0.076, 0.316]; four of them pool to SE 0.05: [0.022, 0.218]
    assert judge(weak, "higher", 0.3) == INCONCLUSIVE
    assert overall([weak] * 4, [INCONCLUSIVE] * 4, "higher", 0.3) == REPRODUCED
