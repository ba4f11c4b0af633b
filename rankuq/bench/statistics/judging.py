"""The verdict taxonomy (``DEFINITIONS``), Benjamini–Hochberg over the registry, the p-value a claim
is adjusted by (``claim_p``), and the verdicts: ``judge`` of one estimate, ``pooled`` and ``overall``
over a claim's conditions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from rankuq.bench.statistics.bootstrap import Estimate
from rankuq.bench.statistics.corrections import corrected

ALPHA = 0.05  # the registry's level: every verdict, interval and power figure of the report
REPRODUCED = "reproduced"
REFUTED = "refuted"
SMALLER = "smaller than reported"
OPPOSITE = "not seen: the estimate points the other way"
INCONCLUSIVE = "inconclusive"
UNTESTABLE = "untestable"
MIXED = "mixed"
NOT_MEASURED = "not measured"

DEFINITIONS: dict[str, str] = {
    REPRODUCED: "the 95 % CI excludes 0 in the paper's direction and the BH-adjusted p < 0.05 "
    "(within a margin: the 90 % CI lies inside ±margin, TOST; a floor: the 95 % CI lies above it; a "
    "ceiling: below it)",
    REFUTED: "the 95 % CI excludes 0 against the paper's direction and the BH-adjusted p < 0.05 "
    "(within a margin: the 95 % CI lies outside ±margin; a floor: the 95 % CI lies below it; a ceiling: "
    "above it; the p is that test's, adjusted)",
    SMALLER: "no significant effect; the estimate points the paper's way and the 95 % CI excludes the "
    "paper's effect (it stops short of it)",
    OPPOSITE: "no significant effect; the estimate points against the paper's direction and the 95 % CI "
    "excludes the paper's effect: the effect was not seen (not refuted: no significant effect either way)",
    INCONCLUSIVE: "the 95 % CI covers both 0 and the paper's effect (or straddles the margin or "
    "floor), or it excludes 0 but the BH-adjusted p is not below 0.05 (significant only before the "
    "correction for the registry's tests, said in the row): this data cannot tell; the row gives the "
    "minimum detectable effect and the data needed",
    UNTESTABLE: "a named precondition fails (the ranker is not above BM25, the shift does not degrade "
    "the model, the metric has no headroom, the selection is degenerate)",
    MIXED: "over conditions only: they disagree in direction, one condition's 95 % CI on the paper's "
    "side of 0 (a floor or ceiling claim: of its bound) and another's on the other side: no single effect "
    "describes them, and the row shows the range of their d, not a pooled one. Conditions that agree "
    "in direction but differ in size (Cochran's Q, p < 0.05) keep the pooled verdict, the row giving Q "
    "and its p",
    NOT_MEASURED: "no run directory holds the claim's values, or they give no finite estimate",
}

Expect = Literal["higher", "lower", "within", "at least", "at most"]
BOUNDS = ("at least", "at most")  # a floor under the value, or a ceiling over it (``margin``: the bound)


# ---------------------------------------------------------------------------------------------------
# Multiplicity


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (``bench.statistics.corrections``, method "bh"), in
    the input's order. NaNs stay NaN and do not count among the m tests."""
    return corrected(np.asarray(p_values, dtype=float).ravel(), "bh")


def claim_p(effect: Estimate, expect: Expect, margin: float | None = None) -> float:
    """The p-value of the test that decides a claim's verdict either way, the one to adjust over the
    registry: "higher"/"lower": the two-sided p of d = 0; "at least"/"at most": the two-sided p of
    d = the floor or ceiling (``margin``): twice the one-sided p on the estimate's side, capped at 1
    (p < α ⇔ the (1 − α) interval above the bound, or below it); "within": where |d| < margin the
    TOST p, max of the one-sided p's of d ≤ −margin and d ≥ margin (p < α ⇔ the (1 − 2α) interval
    inside ±margin), else the p of leaving the margin on d's side, twice the one-sided p of
    d ≤ margin (d ≥ −margin), capped at 1 (p < α ⇔ the (1 − α) interval outside it)."""
    if expect in ("higher", "lower"):
        return effect.p
    if margin is None:
        raise ValueError(f'"{expect}" needs a margin')
    if expect == "within":
        if abs(effect.d) < margin:
            return max(effect.one_sided_p(-margin, above=True), effect.one_sided_p(margin, above=False))
        bound = margin if effect.d >= margin else -margin
        return min(1.0, 2 * effect.one_sided_p(bound, above=effect.d >= margin))
    if expect in BOUNDS:
        return min(1.0, 2 * effect.one_sided_p(margin, above=effect.d >= margin))
    raise ValueError(f"unknown expect {expect!r}")


# ---------------------------------------------------------------------------------------------------
# Verdicts


def judge(
    effect: Estimate,
    expect: Expect,
    paper_effect: float | None,
    margin: float | None = None,
    adjusted_p: float | None = None,
    alpha: float = ALPHA,
) -> str:
    """The verdict of one estimate (``DEFINITIONS``); CI = the (1 − α) interval, 95 % by default.

    "higher"/"lower": the effect is *significant* in a direction when the p (``adjusted_p``, the
    BH-adjusted ``claim_p``, where given, else the raw ``effect.p``) is below α AND the CI lies
    entirely on that side of 0; both are asked because the adjusted p decides whether there is an
    effect at all after multiplicity and the CI says which way (unadjusted, the bootstrap's p < α and
    its CI excluding 0 agree). Significant the paper's way: reproduced; the other way: refuted.
    Otherwise, where the CI excludes the paper's effect (its upper end below it for "higher", its
    lower end above it for "lower"): smaller than reported when d points the paper's way, not seen
    (``OPPOSITE``) when it points the other way; else inconclusive. ``paper_effect`` is in d's
    units and sign (negative for "lower"); None skips those two.

    "within" (``margin`` > 0): reproduced when the (1 − 2α) interval (90 %) lies strictly inside
    (−margin, margin), TOST; refuted when the (1 − α) CI lies entirely outside (above margin or below
    −margin); each only where the adjusted ``claim_p`` (where given) is below α; else inconclusive.

    "at least" (``margin`` = the floor, d = the value): reproduced when the CI's lower end is above
    the floor, refuted when its upper end is below it, each only where the adjusted p is below α;
    else inconclusive. "at most" (``margin`` = a ceiling) the mirror: reproduced when the CI's upper
    end is below the ceiling, refuted when its lower end is above it. A non-finite d or CI: not measured.
    """
    if not 0 < alpha < 0.5:
        raise ValueError("alpha must lie in (0, 0.5)")
    low, high = effect.interval(1 - alpha)
    if not all(map(math.isfinite, (effect.d, low, high))):
        return NOT_MEASURED
    p = effect.p if adjusted_p is None else adjusted_p
    passes = adjusted_p is None or (math.isfinite(adjusted_p) and adjusted_p < alpha)
    if expect in ("higher", "lower"):
        way = 1.0 if expect == "higher" else -1.0
        if paper_effect is not None and not paper_effect * way > 0:
            raise ValueError(f'the paper effect {paper_effect} does not go the "{expect}" way')
        significant = math.isfinite(p) and p < alpha
        if significant and (low > 0 if way > 0 else high < 0):
            return REPRODUCED
        if significant and (high < 0 if way > 0 else low > 0):
            return REFUTED
        if paper_effect is not None and (high < paper_effect if way > 0 else low > paper_effect):
            return SMALLER if effect.d * way > 0 else OPPOSITE
        return INCONCLUSIVE
    if margin is None:
        raise ValueError(f'"{expect}" needs a margin')
    if expect == "within":
        if margin <= 0:
            raise ValueError("the margin must be positive")
        low_tost, high_tost = effect.interval(1 - 2 * alpha)
        if -margin < low_tost and high_tost < margin and passes:
            return REPRODUCED
        if (low > margin or high < -margin) and passes:
            return REFUTED
        return INCONCLUSIVE
    if expect in BOUNDS:
        above, below = low > margin and passes, high < margin and passes
        claimed, against = (above, below) if expect == "at least" else (below, above)
        return REPRODUCED if claimed else REFUTED if against else INCONCLUSIVE
    raise ValueError(f"unknown expect {expect!r}")


@dataclass(frozen=True)
class Pooled:
    """The inverse-variance weighted (fixed-effect) mean of the conditions' d:
    d = Σ w_i d_i / Σ w_i, w_i = 1 / SE_i², SE = 1 / sqrt(Σ w_i), CI d ± z_{1−α/2} SE, p two-sided
    normal; Cochran's Q = Σ w_i (d_i − d)², ``q_p`` = P(χ²_{k−1} ≥ Q) (nan with one condition).
    ``used``: which of the given effects entered (a finite d and a finite SE > 0)."""

    d: float
    se: float
    p: float
    q: float
    q_p: float
    conditions: int
    weights: tuple[float, ...]
    used: tuple[int, ...]

    @property
    def low(self) -> float:
        return self.interval()[0]

    @property
    def high(self) -> float:
        return self.interval()[1]

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        if not (math.isfinite(self.d) and math.isfinite(self.se)):
            return math.nan, math.nan
        half = float(stats.norm.ppf(0.5 + level / 2)) * self.se
        return self.d - half, self.d + half

    def one_sided_p(self, threshold: float, above: bool) -> float:
        if not (math.isfinite(self.d) and math.isfinite(self.se)) or self.se == 0:
            return math.nan
        z = (self.d - threshold) / self.se
        return float(stats.norm.sf(z) if above else stats.norm.cdf(z))


def pooled(effects: Sequence[Estimate]) -> Pooled:
    """The fixed-effect pooled estimate over conditions (``Pooled``). Conditions with a zero or
    non-finite SE carry no sampling information and are left out (``used`` lists the others); the
    caller marks such degenerate conditions untestable before pooling."""
    used = tuple(i for i, e in enumerate(effects) if math.isfinite(e.d) and math.isfinite(e.se) and e.se > 0)
    if not used:
        return Pooled(math.nan, math.nan, math.nan, math.nan, math.nan, 0, (), ())
    d_i = np.array([effects[i].d for i in used])
    w = 1 / np.array([effects[i].se for i in used]) ** 2
    d = float(np.sum(w * d_i) / np.sum(w))
    se = float(1 / np.sqrt(np.sum(w)))
    p = float(2 * stats.norm.sf(abs(d) / se))
    q = float(np.sum(w * (d_i - d) ** 2))
    q_p = float(stats.chi2.sf(q, len(used) - 1)) if len(used) >= 2 else math.nan
    return Pooled(d, se, p, q, q_p, len(used), tuple(float(x) for x in w), used)


def directions(effects: Sequence[Estimate], point: float = 0.0, alpha: float = ALPHA) -> list[int]:
    """Each estimate's side of ``point`` (0, or a floor): +1 where its (1 − α) CI lies above it, −1
    below, 0 where the CI covers it (or is not finite)."""
    found = []
    for effect in effects:
        low, high = effect.interval(1 - alpha)
        found.append(1 if low > point else -1 if high < point else 0)
    return found


def disagree_in_direction(effects: Sequence[Estimate], point: float = 0.0, alpha: float = ALPHA) -> bool:
    """Whether one estimate's (1 − α) CI lies on one side of ``point`` and another's on the other."""
    sides = directions(effects, point, alpha)
    return 1 in sides and -1 in sides


def point_of(expect: Expect, margin: float | None) -> float:
    """What a claim's direction is read against: the floor or ceiling of a bound claim, else 0."""
    return margin if expect in BOUNDS and margin is not None else 0.0


def overall(
    effects: Sequence[Estimate],
    verdicts: Sequence[str],
    expect: Expect,
    paper_effect: float | None,
    margin: float | None = None,
    alpha: float = ALPHA,
    adjusted_p: float | None = None,
) -> str:
    """A claim's verdict over its conditions, from the pooled estimate, never a vote.

    ``verdicts``: the conditions' own verdicts (``judge``'s, or untestable / not measured from the
    preconditions), in the order of ``effects``. Conditions judged untestable or not measured, or
    without a finite d, are left out; none left: untestable if any was, else not measured. One left:
    its own ``judge`` verdict (its bootstrap CI, not a normal one). Several: *mixed* when they disagree
    in direction, one condition's (1 − α) CI on one side of 0 (a bound claim: of its floor or ceiling) and
    another's on the other (``disagree_in_direction``): no single effect describes them; otherwise
    ``judge`` of the ``pooled`` estimate (``adjusted_p``: the claim's BH-adjusted pooled ``claim_p``,
    where the caller adjusts it), also where Cochran's Q says they differ in size only: the caller
    reports Q beside the verdict.
    """
    if len(effects) != len(verdicts):
        raise ValueError("one verdict per effect")
    kept = [
        (e, v)
        for e, v in zip(effects, verdicts, strict=True)
        if v not in (UNTESTABLE, NOT_MEASURED) and math.isfinite(e.d)
    ]
    if not kept:
        return UNTESTABLE if UNTESTABLE in verdicts else NOT_MEASURED
    if len(kept) == 1:
        return judge(kept[0][0], expect, paper_effect, margin, adjusted_p, alpha)
    if disagree_in_direction([e for e, _ in kept], point_of(expect, margin), alpha):
        return MIXED
    return judge(pooled([e for e, _ in kept]), expect, paper_effect, margin, adjusted_p, alpha)
