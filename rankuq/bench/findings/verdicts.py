"""How a claim is judged: one statistical procedure for every claim (``bench.statistics``).

Per condition, the effect d in the paper's terms (``Claim.scale``) comes from the paired two-level
bootstrap over the seeds and the queries of the run's per-query records (queries.parquet): both
sides of a comparison share the drawn seeds and queries (``bench.findings.sides``). Before a claim
is judged in a condition, its preconditions are checked (``bench.findings.preconditions``); one
that fails makes the condition *untestable* with the reason. The p-values of every judged
condition of the registry are adjusted together (Benjamini–Hochberg) and each condition gets its
verdict from its CI, the paper's effect and the adjusted p (``statistics.judge``); a claim over
several conditions is judged from the pooled estimate, or *mixed* where the conditions disagree in
direction (``statistics.overall``). The cost claims are measured in ``bench.findings.cost``.
"""

import math
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from rankuq.bench import statistics
from rankuq.bench.findings.claims import COST, Check, Claim
from rankuq.bench.findings.cost import assess_cost
from rankuq.bench.findings.preconditions import check, shift_hurts
from rankuq.bench.findings.rows import Measured, Row
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.findings.sides import bootstrap, contrast, digest, no_shift_condition, side_values, sides_of


def conditions_of(claim: Claim, run: FinishedRun) -> list[str]:
    return [
        condition
        for condition, (kind, variant) in run.kinds.items()
        if kind in claim.kinds
        and (claim.variant is None or variant == claim.variant)
        and claim.condition in (None, condition)
    ]


# A relative effect over a reference this close to 0 (ECE 0.02, say) is a ratio of noise: such a claim
# is judged in absolute terms, the paper's relative effect taken of the measured reference.
NEAR_ZERO = 0.05


def measure(claim: Claim, run: FinishedRun, condition: str) -> Measured:
    """The claim in one condition of ``run``: its checks, and its effect (shown even where a check
    fails). A relative effect is a ratio of means over the seeds (``pool="values"``)."""
    found = sides_of(claim, run, condition)
    if isinstance(found, str):
        if claim.baseline_condition is not None and no_shift_condition(run, condition) is None:
            # the reference the claim compares with is the one shift_hurts reads: untestable, not unmeasured
            return Measured(condition, None, math.nan, math.nan, (shift_hurts(run, condition),), note=found)
        return Measured(condition, None, math.nan, math.nan, note=found)
    sides, _ = found
    values = side_values(sides)
    reference = _reference(claim, values)
    checks = tuple(check(name, claim, run, condition, reference) for name in claim.preconditions)
    pool: statistics.Pool = "values" if claim.scale == "relative" else "contrasts"
    effect = bootstrap(sides, contrast(claim, len(sides)), pool)
    note = "" if effect is not None else "the sides share no seed and query"
    if effect is not None and effect.se == 0 and effect.d == 0 and claim.floor is None:
        same = "the two sides are equal on every query and seed: d has no spread to test"
        checks += (Check("distinct", False, same),)
    key = digest(claim, sides)
    return Measured(condition, effect, values[0], float(reference), checks, note=note, digest=key)


def assess(claim: Claim, runs: Sequence[FinishedRun], cost: pd.DataFrame | None = None) -> Row:
    """The claim measured in every condition it is about, in the first run of its grid (verdicts
    come in ``judge_all``)."""
    return assess_runs(claim, runs, cost)[0]


def assess_runs(claim: Claim, runs: Sequence[FinishedRun], cost: pd.DataFrame | None = None) -> list[Row]:
    """The claim measured in every run of its grid, one row each: a grid run at two scales (the
    CPU's small rankers, a GPU's full-scale ones) is two run sets, each judged."""
    if claim.grid == COST:
        return [assess_cost(claim, cost)]
    mine = [run for run in runs if run.spec.name == claim.grid]
    if not mine:
        return [Row(claim, None, (), statistics.NOT_MEASURED, f"no run directory of grid {claim.grid} given")]
    return [_assess_in(claim, run) for run in mine]


def _assess_in(claim: Claim, run: FinishedRun) -> Row:
    if run.queries is None:
        note = f"{run.folder} has no queries.parquet (per-query records): rerun it with this checkout"
        return Row(claim, run, (), statistics.NOT_MEASURED, note)
    conditions = conditions_of(claim, run)
    claim = in_absolute_terms(claim, _references(claim, run, conditions)) or claim
    measured = tuple(measure(claim, run, condition) for condition in conditions)
    note = "" if measured else f"{run.folder.name} has no condition of {scope(claim)}"
    return Row(claim, run, measured, statistics.NOT_MEASURED, note)


def _reference(claim: Claim, values: Sequence[float]) -> float:
    """What the method's value is compared with: the floor, or the best of the other sides' values."""
    return claim.floor if claim.floor is not None else max(values[1:])


def _references(claim: Claim, run: FinishedRun, conditions: Sequence[str]) -> list[float]:
    """The claim's reference value in each condition that has its sides (no bootstrap: the values)."""
    found = (sides_of(claim, run, condition) for condition in conditions)
    return [_reference(claim, side_values(sides[0])) for sides in found if not isinstance(sides, str)]


def in_absolute_terms(claim: Claim, references: Sequence[float]) -> Claim | None:
    """A relative claim whose reference is near 0 in some condition (``NEAR_ZERO``), restated in
    absolute terms: the paper's effect (and margin) taken of the mean measured reference; None where
    the relative terms stand."""
    references = [r for r in references if math.isfinite(r)]
    if claim.scale != "relative" or not references or min(map(abs, references)) >= NEAR_ZERO:
        return None
    base = float(sum(references) / len(references))
    effect = None if claim.paper_effect is None else round(claim.paper_effect * base, 4)
    said = "" if effect is None else f"; the paper's {claim.paper_effect:+.1%} of it: {effect:+.4f}"
    return replace(
        claim,
        scale="absolute",
        paper_effect=effect,
        margin=claim.margin * base,
        quote=f"{claim.quote} [judged in absolute terms here: the reference is below {NEAR_ZERO} in a "
        f"condition, where a relative change is a ratio of noise; mean reference {base:.3f}{said}]",
    )


def judge_all(rows: Sequence[Row]) -> list[Row]:
    """Verdicts for every row. Benjamini–Hochberg over the whole registry, within each family: every
    judged condition (for the per-condition verdicts), and every claim's overall test (its one
    condition, or the pooled estimate of several: the claim's verdict); the papers' claims and this
    project's sanity checks are separate families (a sanity check is no test of a paper)."""
    tested = [
        (i, j)
        for i, row in enumerate(rows)
        for j, m in enumerate(row.measured)
        if m.effect is not None and m.failed is None and not m.descriptive  # shown, not judged
    ]
    p_values = [_claim_p(rows[i].claim, rows[i].measured[j].effect) for i, j in tested]
    families = [rows[i].claim.sanity for i, _ in tested]
    # a test made twice (cells two grids share: the same digest) enters Benjamini–Hochberg once
    keys = [rows[i].measured[j].digest or f"{i}.{j}" for i, j in tested]
    adjusted = dict(zip(tested, _adjusted_once(p_values, families, keys), strict=True))
    conditions = [
        replace(
            row,
            measured=tuple(_judged(row.claim, m, adjusted.get((i, j))) for j, m in enumerate(row.measured)),
        )
        for i, row in enumerate(rows)
    ]
    estimates = [_estimate(row) for row in conditions]
    # a claim whose conditions disagree in direction is mixed whatever its pooled p: no test of it
    overall_p = [
        _claim_p(row.claim, estimate) if estimate is not None and not in_both_directions(row) else math.nan
        for row, estimate in zip(conditions, estimates, strict=True)
    ]
    row_keys = [_row_key(row, judged_conditions(row)) or str(i) for i, row in enumerate(conditions)]
    overall_adjusted = _adjusted_once(overall_p, [row.claim.sanity for row in rows], row_keys)
    judged = [
        _overall(row, estimate, float(p))
        for row, estimate, p in zip(conditions, estimates, overall_adjusted, strict=True)
    ]
    return _mark_duplicates(judged)


def _row_key(row: Row, measured: Sequence[Measured]) -> str | None:
    """The tests a row makes (its conditions' digests), or None where one has none."""
    digests = [m.digest for m in measured if not m.descriptive]
    return "+".join(sorted(digests)) if digests and all(digests) else None


def _mark_duplicates(rows: Sequence[Row]) -> list[Row]:
    """A row whose every condition is a test an earlier row made on the same cells (``Measured.digest``)
    names that row: the report counts the tests once."""
    first: dict[str, str] = {}
    marked = []
    for row in rows:
        key = _row_key(row, row.measured)
        owner = first.setdefault(key, row.claim.id) if key is not None else row.claim.id
        marked.append(replace(row, duplicate_of=owner) if owner != row.claim.id else row)
    return marked


def _adjusted_once(p_values: Sequence[float], families: Sequence[bool], keys: Sequence[str]) -> list[float]:
    """``_adjusted`` with each key's p entering once: the same test made twice counts once in m, and
    every copy gets its adjusted p."""
    first: dict[tuple[bool, str], int] = {}
    for k, key in enumerate(keys):
        first.setdefault((families[k], key), k)
    unique = sorted(set(first.values()))
    adjusted = dict(
        zip(unique, _adjusted([p_values[k] for k in unique], [families[k] for k in unique]), strict=True)
    )
    return [adjusted[first[(families[k], key)]] for k, key in enumerate(keys)]


def _adjusted(p_values: Sequence[float], families: Sequence[bool]) -> list[float]:
    """Benjamini–Hochberg within each family (``families``: one key per p-value), in the input's order."""
    adjusted = [math.nan] * len(p_values)
    for family in set(families):
        members = [k for k, f in enumerate(families) if f == family]
        for k, p in zip(members, statistics.benjamini_hochberg([p_values[k] for k in members]), strict=True):
            adjusted[k] = float(p)
    return adjusted


def _claim_p(claim: Claim, estimate: statistics.Estimate | None) -> float:
    if estimate is None:
        return math.nan
    return statistics.claim_p(estimate, _expect(claim), _margin(claim))


def _expect(claim: Claim) -> statistics.Expect:
    """ "no worse" (d ≥ −margin) is a floor under d: judged as "at least" −margin."""
    return "at least" if claim.expect == "no worse" else claim.expect


def _margin(claim: Claim) -> float | None:
    """What ``statistics.judge`` calls the margin: the equivalence margin, or a floor or ceiling."""
    if claim.expect in statistics.BOUNDS:
        return claim.floor
    if claim.expect == "no worse":
        return -claim.margin
    return claim.margin if claim.expect == "within" else None


def _judged(claim: Claim, m: Measured, adjusted: float | None) -> Measured:
    if m.descriptive:
        return m
    failed = m.failed
    if failed is not None:
        return replace(m, verdict=statistics.UNTESTABLE, note=f"{failed.name}: {failed.detail}")
    if m.effect is None:
        return replace(m, verdict=statistics.NOT_MEASURED)
    verdict = statistics.judge(m.effect, _expect(claim), _paper(claim), _margin(claim), adjusted)
    adjusted_p = math.nan if adjusted is None else adjusted
    return replace(m, verdict=verdict, p=_claim_p(claim, m.effect), adjusted_p=adjusted_p)


def _paper(claim: Claim) -> float | None:
    """The paper's effect where the verdict compares with it: not for bounds (a bound is the claim)."""
    return None if claim.expect in (*statistics.BOUNDS, "no worse") else claim.paper_effect


LEFT_OUT = (statistics.NOT_MEASURED, statistics.UNTESTABLE)  # conditions a claim's estimate leaves out


def judged_conditions(row: Row) -> list[Measured]:
    """The conditions a claim's overall estimate rests on: judged ones, not the shown-only ones."""
    return [m for m in row.measured if m.verdict not in LEFT_OUT and not m.descriptive]


def _estimate(row: Row) -> statistics.Estimate | None:
    """The claim's overall estimate: its one judged condition's effect, or the conditions pooled."""
    judged = judged_conditions(row)
    if len(judged) == 1:
        return judged[0].effect
    if not judged:
        return None
    pooled = statistics.pooled([m.effect for m in judged if m.effect is not None])
    return pooled if math.isfinite(pooled.d) else None


def _overall(row: Row, estimate: statistics.Estimate | None, adjusted: float) -> Row:
    judged = judged_conditions(row)
    if estimate is None or not judged:
        untestable = [m for m in row.measured if m.verdict == statistics.UNTESTABLE]
        verdict = statistics.UNTESTABLE if untestable else statistics.NOT_MEASURED
        note = row.note or (
            untestable_note(untestable) if untestable else row.measured[0].note if row.measured else ""
        )
        return replace(row, verdict=verdict, note=note)
    claim, p = row.claim, adjusted if math.isfinite(adjusted) else None
    effects = [m.effect for m in judged if m.effect is not None]
    verdicts = [m.verdict for m in judged]
    verdict = statistics.overall(
        effects, verdicts, _expect(claim), _paper(claim), _margin(claim), adjusted_p=p
    )
    overall_p = _claim_p(claim, estimate) if verdict != statistics.MIXED else math.nan
    return replace(row, verdict=verdict, overall=estimate, overall_p=overall_p, overall_adjusted_p=adjusted)


def in_both_directions(row: Row, measured: Sequence[Measured] | None = None) -> bool:
    """Whether the row's judged conditions (or ``measured``) disagree in direction: one's 95 % CI on
    one side of 0 (a bound claim: of its bound), another's on the other (``statistics.overall``)."""
    found = judged_conditions(row) if measured is None else measured
    effects = [m.effect for m in found if m.effect is not None and math.isfinite(m.effect.d)]
    point = statistics.point_of(_expect(row.claim), _margin(row.claim))
    return len(effects) > 1 and statistics.disagree_in_direction(effects, point)


def causes(measured: Sequence[Measured]) -> dict[str, list[str]]:
    """The conditions left out, by what left them out (the precondition, or not measured), in order."""
    found: dict[str, list[str]] = {}
    for m in measured:
        found.setdefault(m.failed.name if m.failed else m.verdict, []).append(m.condition)
    return found


def untestable_note(untestable: Sequence[Measured]) -> str:
    """An untestable claim's cause, named once: the first condition's failed precondition with its
    detail, then where else it failed and what else failed where (no detail repeated)."""
    first = untestable[0]
    if len(untestable) == 1:
        return first.note
    grouped = causes(untestable[1:])
    name = first.failed.name if first.failed else first.verdict
    same = grouped.pop(name, [])
    where = [f"also in {', '.join(same)}"] if same else []
    where += [f"{other} in {', '.join(conditions)}" for other, conditions in grouped.items()]
    return f"{first.note} (in {first.condition}; {'; '.join(where)})"


def scope(claim: Claim) -> str:
    if claim.condition is not None:
        return f"condition {claim.condition}"
    variant = f", {claim.variant} lists" if claim.variant else ""
    return f"{'/'.join(claim.kinds)} conditions{variant}"
