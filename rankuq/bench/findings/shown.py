"""The one number a claim's row shows (``shown``), in the report's table and the forest plot alike: its
overall estimate with the 95 % CI; an untestable claim's measured effect all the same (one condition's,
or the conditions pooled where they agree); and, where conditions disagree (a mixed claim, or an
untestable one whose conditions disagree in direction or in size), the range of their d, never a pooled
number that describes none of them. Values are in the claim's terms: a floor claim's as value − floor,
as its paper effect is (``offset``)."""

import math
from dataclasses import dataclass

from rankuq.bench import statistics
from rankuq.bench.findings.claims import Claim
from rankuq.bench.findings.rows import Measured, Row
from rankuq.bench.findings.verdicts import in_both_directions, judged_conditions


def q_p_text(value: float) -> str:
    """Cochran's Q's p as the report prints a p."""
    if math.isnan(value):
        return "—"
    return "< 1e-04" if value < 1e-4 else f"{value:.2g}"


def offset(claim: Claim) -> float:
    """What d is shown against: a floor claim's d is its value − the floor, as the paper's effect is."""
    return claim.floor if claim.floor is not None else 0.0


@dataclass(frozen=True)
class Shown:
    """A row's number: ``d`` with its 95 % CI [``low``, ``high``], or a range (``d`` None) from the
    lowest condition's d (``low``, at ``ends[0]``) to the highest's; ``where`` it comes from; for a
    range, why the conditions are not pooled (``disagree``)."""

    d: float | None
    low: float
    high: float
    where: str
    ends: tuple[str, str] | None = None
    disagree: str = ""

    @property
    def is_range(self) -> bool:
        return self.d is None


def shown(row: Row) -> Shown | None:
    """The row's number (``Shown``); None where it has none (not measured, or no finite effect)."""
    if row.verdict == statistics.MIXED:
        return _range(row, judged_conditions(row))
    if row.verdict == statistics.UNTESTABLE:
        return _untestable(row)
    if row.overall is None or not math.isfinite(row.overall.d):
        return None
    judged = judged_conditions(row)
    where = judged[0].condition if len(judged) == 1 else f"pooled over {len(judged)} conditions"
    return _estimate(row.claim, row.overall, where)


def _untestable(row: Row) -> Shown | None:
    """The measured effect of an untestable claim's conditions (a CPU's counts left out): one
    condition's, their pooled estimate where they agree, else their range."""
    measured = [
        m for m in row.measured if m.effect is not None and not m.descriptive and math.isfinite(m.effect.d)
    ]
    if not measured:
        return None
    if len(measured) == 1:
        return _estimate(row.claim, _effect(measured[0]), measured[0].condition)
    effects = [_effect(m) for m in measured]
    if len({(e.d, *e.interval()) for e in effects}) == 1:  # one number everywhere (d = 0 without spread)
        return _estimate(row.claim, effects[0], f"the same in all {len(measured)} conditions")
    together = statistics.pooled(effects)
    if in_both_directions(row, measured) or together.q_p < statistics.ALPHA or not math.isfinite(together.d):
        return _range(row, measured)
    return _estimate(row.claim, together, f"pooled over {len(measured)} conditions")


def _effect(m: Measured) -> statistics.Effect | statistics.RepeatTest:
    assert m.effect is not None  # the callers keep the measured ones
    return m.effect


def _estimate(claim: Claim, estimate: statistics.Estimate, where: str) -> Shown:
    shift = offset(claim)
    low, high = estimate.interval()
    return Shown(estimate.d - shift, low - shift, high - shift, where)


def _range(row: Row, measured: list[Measured]) -> Shown | None:
    """From the lowest condition's d to the highest's, and why they are not pooled: in direction (each
    side's conditions named) or in size (Cochran's Q)."""
    kept = [m for m in measured if m.effect is not None and math.isfinite(m.effect.d)]
    if not kept:
        return None
    shift = offset(row.claim)
    lowest = min(kept, key=lambda m: _effect(m).d)
    highest = max(kept, key=lambda m: _effect(m).d)
    effects = [_effect(m) for m in kept]
    bound = "the ceiling" if row.claim.expect == "at most" else "the floor"
    point = "0" if row.claim.floor is None else bound  # what a condition's CI lies above or below
    if in_both_directions(row, kept):
        sides = statistics.directions(effects, shift)
        above = [m.condition for m, side in zip(kept, sides, strict=True) if side > 0]
        below = [m.condition for m, side in zip(kept, sides, strict=True) if side < 0]
        why = (
            f"they disagree in direction: the 95 % CI of {', '.join(above)} above {point}, of "
            f"{', '.join(below)} below it"
        )
    elif math.isfinite((together := statistics.pooled(effects)).q):
        why = f"they differ in size: Cochran's Q {together.q:.1f}, p {q_p_text(together.q_p)}"
    else:  # a condition without spread (SE 0) carries no weight to pool with
        why = "a condition has no spread (SE 0), so they have no pooled estimate"
    return Shown(
        None,
        _effect(lowest).d - shift,
        _effect(highest).d - shift,
        f"{len(kept)} conditions",
        (lowest.condition, highest.condition),
        why,
    )
