"""How a claim is judged: one statistical procedure for every claim (``bench.findings.statistics``).

Per condition, the effect d in the paper's terms (``Claim.scale``) comes from the paired two-level
bootstrap over the seeds and the queries of the run's per-query records (queries.parquet): both
sides of a comparison share the drawn seeds and queries. Before a claim is judged in a condition,
its preconditions are checked (``check``); one that fails makes the condition *untestable* with the
reason. The p-values of every judged condition of the registry are adjusted together
(Benjamini–Hochberg) and each condition gets its verdict from its CI, the paper's effect and the
adjusted p (``statistics.judge``); a claim over several conditions is judged from the pooled
estimate, or *mixed* where the conditions significantly disagree (``statistics.overall``).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import COST, Claim, Precondition
from rankuq.bench.findings.runs import Run
from rankuq.bench.probes.parts import STATISTICS, QueryParts

PRECONDITION_METRIC = "AP"  # a working ranker and a hurting shift are judged on AP: no ceiling below 1


@dataclass(frozen=True)
class Check:
    """One precondition in one condition: passed, failed, or not checkable (``passed`` None)."""

    name: Precondition
    passed: bool | None
    detail: str


@dataclass(frozen=True)
class Measured:
    """A claim in one condition: its effect, the two sides' values, the checks, the verdict."""

    condition: str
    effect: statistics.Effect | None
    value: float  # the method's metric, mean over seeds
    reference: float  # what it is compared with, mean over seeds
    checks: tuple[Check, ...] = ()
    verdict: str = statistics.NOT_MEASURED
    note: str = ""
    adjusted_p: float = math.nan
    unit: str = "seeds × queries"

    @property
    def failed(self) -> Check | None:
        return next((c for c in self.checks if c.passed is False or c.passed is None), None)


@dataclass(frozen=True)
class Row:
    """A claim over its conditions: each condition measured, the overall verdict."""

    claim: Claim
    run: Run | None
    measured: tuple[Measured, ...]
    verdict: str
    note: str
    overall: statistics.Estimate | None = None  # one condition's effect, or the conditions pooled
    overall_adjusted_p: float = math.nan
    command: str = ""  # what produced the measurements, where no run directory did


Sides = list[dict[int, QueryParts]]


def conditions_of(claim: Claim, run: Run) -> list[str]:
    return [
        condition
        for condition, (kind, variant) in run.kinds.items()
        if kind in claim.kinds
        and (claim.variant is None or variant == claim.variant)
        and claim.condition in (None, condition)
    ]


def contrast(claim: Claim, sides: int) -> statistics.Contrast:
    """d of one seed from the sides' values: the method's value against a floor (d is the value
    itself, judged against the floor), or against the reference (the best of several), absolute or
    relative to it."""
    if claim.floor is not None:
        return statistics.value(0)
    if sides == 2:
        return statistics.relative(0, 1) if claim.scale == "relative" else statistics.difference(0, 1)
    if claim.scale == "absolute":
        return statistics.over_best(0)

    def best_relative(v: np.ndarray) -> np.ndarray:
        best = v[1:].max(axis=0)
        return (v[0] - best) / np.abs(best)

    return statistics.Contrast(best_relative, "(v0 − max of the others) / |max|")


def _pooled_error(sums: np.ndarray, n: int) -> np.ndarray:
    return np.abs(sums[..., :-1]).sum(axis=-1) / sums[..., -1]


# The parts' statistics (bench.probes.parts) in the bootstrap's vectorised forms where they are
# functions of column sums; the others are called on each resample's rows.
FAST: dict[str, statistics.SumStatistic] = {
    "mean": statistics.mean(0),
    "ratio_of_means": statistics.ratio_of_means(0, 1),
    "calibration_error": statistics.SumStatistic(_pooled_error, "pooled calibration error"),
}


def aligned(sides: Sides) -> tuple[list[list[np.ndarray]], list[str]] | None:
    """Each side's rows per seed on the queries every side has (the first side's order), and the
    statistics; None when a side lacks a seed of the first."""
    seeds = sorted(sides[0])
    if not seeds or any(set(seeds) - set(side) for side in sides[1:]):
        return None
    rows: list[list[np.ndarray]] = [[] for _ in sides]
    for seed in seeds:
        common = set(sides[0][seed].qids)
        for side in sides[1:]:
            common &= set(side[seed].qids)
        for i, side in enumerate(sides):
            parts = side[seed]
            index = {qid: n for n, qid in enumerate(parts.qids)}
            order = [index[q] for q in sides[0][seed].qids if q in common]
            rows[i].append(parts.rows[order])
    return rows, [next(iter(side.values())).statistic for side in sides]


def bootstrap(sides: Sides, d: statistics.Contrast) -> statistics.Effect | None:
    """The paired bootstrap of the sides on their common queries: the crossed design, as every seed of
    a grid scores the same test queries (one query resample serves every seed of a replicate)."""
    found = aligned(sides)
    if found is None or any(len(r) == 0 for seed_rows in found[0] for r in seed_rows):
        return None
    rows, names = found
    chosen = [FAST.get(name, STATISTICS[name]) for name in names]
    return statistics.paired_bootstrap(rows, chosen, d, design="crossed")


def side_values(sides: Sides) -> list[float]:
    """Each side's metric on all its queries, mean over seeds."""
    return [float(np.mean([parts.value() for parts in side.values()])) for side in sides]


def sides_of(claim: Claim, run: Run, condition: str) -> tuple[Sides, str] | str:
    """The sides of the claim's comparison in ``condition``, and the reference's description, or why
    there are none."""
    mine = run.parts(condition, claim.method, claim.metric)
    if not mine:
        return f"no per-query {claim.metric} of {claim.method}"
    if claim.floor is not None:
        return [mine], f"{claim.floor:g}"
    if claim.baseline_condition is not None:
        plain = no_shift_condition(run, condition)
        if plain is None:
            return f"no condition without shift on {condition}'s test data"
        theirs = run.parts(plain, claim.method, claim.metric)
        return (
            ([mine, theirs], plain) if theirs else f"no per-query {claim.metric} of {claim.method} in {plain}"
        )
    if claim.reference is not None:
        owner = claim.against or claim.method
        others = [run.parts(condition, owner, metric) for metric in claim.reference]
        missing = [m for m, side in zip(claim.reference, others, strict=True) if not side]
        return ([mine, *others], owner) if not missing else f"no per-query {', '.join(missing)} of {owner}"
    other = claim.against or run.spec.baseline
    if other is None:
        return "the grid has no baseline method to compare with"
    theirs = run.parts(condition, other, claim.metric)
    return ([mine, theirs], other) if theirs else f"no per-query {claim.metric} of {other}"


def no_shift_condition(run: Run, condition: str) -> str | None:
    """The in-domain condition of ``run`` (trained on its own test task) that tests the same task and
    list variant as ``condition``: the reference a shift is measured against."""
    task, variant = run.tested[condition][0], run.kinds[condition][1]
    return next(
        (
            other
            for other, (kind, other_variant) in run.kinds.items()
            if kind == "in-domain" and other_variant == variant and run.tested[other][0] == task
        ),
        None,
    )


def measure(claim: Claim, run: Run, condition: str) -> Measured:
    """The claim in one condition of ``run``: its checks, and its effect where they pass."""
    found = sides_of(claim, run, condition)
    if isinstance(found, str):
        return Measured(condition, None, math.nan, math.nan, note=found)
    sides, _ = found
    values = side_values(sides)
    reference = claim.floor if claim.floor is not None else max(values[1:])
    checks = tuple(check(name, claim, run, condition, reference) for name in claim.preconditions)
    effect = bootstrap(sides, contrast(claim, len(sides)))
    note = "" if effect is not None else "the sides share no seed and query"
    return Measured(condition, effect, values[0], float(reference), checks, note=note)


def check(name: Precondition, claim: Claim, run: Run, condition: str, reference: float) -> Check:
    """One precondition of a claim in a condition (see ``bench.findings.claims.Precondition``)."""
    if name == "above_bm25":
        return _above_bm25(run, condition)
    if name == "shift_hurts":
        if run.kinds[condition][0] == "in-domain":
            return Check(name, True, "no shift in this condition")
        return _shift_hurts(run, condition)
    if name == "headroom":
        return _headroom(claim, run, condition, reference)
    return _b_selected(claim, run, condition)


def _above_bm25(run: Run, condition: str) -> Check:
    return _effect_check(run, condition, "above_bm25")


def _shift_hurts(run: Run, condition: str) -> Check:
    return _effect_check(run, condition, "shift_hurts")


def _effect_check(run: Run, condition: str, name: Precondition) -> Check:
    """bert's AP against BM25's in the condition, or against its own without shift."""
    metric = PRECONDITION_METRIC
    bert = run.parts(condition, "bert", metric)
    if name == "above_bm25":
        bm25 = run.parts(condition, "bm25", metric)
        if not bert or not bm25:
            return Check(name, None, f"the grid has no bert and bm25 {metric} in {condition}")
        effect = bootstrap([bert, bm25], statistics.difference(0, 1))
        what = f"bert's {metric} − BM25's"
    else:
        plain = no_shift_condition(run, condition)
        plain_bert = run.parts(plain, "bert", metric) if plain else {}
        if not bert or not plain_bert:
            return Check(name, None, f"no condition without shift on {condition}'s test data to compare with")
        effect = bootstrap([bert, plain_bert], statistics.difference(0, 1))
        what = f"bert's {metric} here − in {plain}"
    if effect is None:
        return Check(name, None, f"{what}: no shared seed and query")
    passed = effect.low > 0 if name == "above_bm25" else effect.high < 0
    return Check(name, passed, f"{what} = {effect.d:+.3f} [{effect.low:+.3f}, {effect.high:+.3f}]")


def _headroom(claim: Claim, run: Run, condition: str, reference: float) -> Check:
    """The paper's effect fits below the metric's ceiling (``<metric>.ceiling``: R@1 is at most
    1/#relevant of a query)."""
    ceiling = run.parts(condition, claim.method, "R@1.ceiling")
    if not ceiling:
        return Check("headroom", None, "no R@1.ceiling recorded")
    top = float(np.mean([parts.value() for parts in ceiling.values()]))
    needed = abs(claim.paper_effect or 0.0) * (abs(reference) if claim.scale == "relative" else 1.0)
    room = top - reference
    return Check(
        "headroom",
        room >= needed and room > 0,
        f"{claim.compared()} {reference:.3f} against R@1's ceiling {top:.3f}: room {room:.3f}, the paper's "
        f"effect needs {needed:.3f}",
    )


def _b_selected(claim: Claim, run: Run, condition: str) -> Check:
    """RA's b chosen on dev (the metric's prefix + ".b": RA.b, RA.neg.b) is not 0 in every seed."""
    column = claim.metric.rsplit(".", 1)[0] + ".b"
    rows = run.seeds[(run.seeds.condition == condition) & (run.seeds.method == claim.method)]
    if column not in rows or rows[column].isna().all():
        return Check("b_selected", None, f"no {column} recorded")
    chosen = rows.sort_values("seed")[column].to_numpy(dtype=float)
    return Check(
        "b_selected", bool((chosen != 0).any()), f"b per seed: {', '.join(f'{b:g}' for b in chosen)}"
    )


def assess(claim: Claim, runs: Sequence[Run], cost: pd.DataFrame | None = None) -> Row:
    """The claim measured in every condition it is about (verdicts come in ``judge_all``)."""
    if claim.grid == COST:
        return _assess_cost(claim, cost)
    run = next((run for run in runs if run.spec.name == claim.grid), None)
    if run is None:
        return Row(claim, None, (), statistics.NOT_MEASURED, f"no run directory of grid {claim.grid} given")
    if run.queries is None:
        note = f"{run.folder} has no queries.parquet (per-query records): rerun it with this checkout"
        return Row(claim, run, (), statistics.NOT_MEASURED, note)
    measured = tuple(measure(claim, run, condition) for condition in conditions_of(claim, run))
    note = "" if measured else f"{run.folder.name} has no condition of {scope(claim)}"
    return Row(claim, run, measured, statistics.NOT_MEASURED, note)


def judge_all(rows: Sequence[Row]) -> list[Row]:
    """Verdicts for every row. Two families of tests, each adjusted by Benjamini–Hochberg over the
    whole registry: every judged condition (for the per-condition verdicts), and every claim's overall
    test (its one condition, or the pooled estimate of several: the claim's verdict)."""
    tested = [
        (i, j)
        for i, row in enumerate(rows)
        for j, m in enumerate(row.measured)
        if m.effect is not None and m.failed is None
    ]
    p_values = [_claim_p(rows[i].claim, rows[i].measured[j].effect) for i, j in tested]
    adjusted = dict(zip(tested, statistics.benjamini_hochberg(p_values), strict=True))
    conditions = [
        replace(
            row,
            measured=tuple(_judged(row.claim, m, adjusted.get((i, j))) for j, m in enumerate(row.measured)),
        )
        for i, row in enumerate(rows)
    ]
    estimates = [_estimate(row) for row in conditions]
    overall_p = [
        _claim_p(row.claim, estimate) if estimate is not None else math.nan
        for row, estimate in zip(conditions, estimates, strict=True)
    ]
    overall_adjusted = statistics.benjamini_hochberg(overall_p)
    return [
        _overall(row, estimate, float(p))
        for row, estimate, p in zip(conditions, estimates, overall_adjusted, strict=True)
    ]


def _claim_p(claim: Claim, estimate: statistics.Estimate | None) -> float:
    if estimate is None:
        return math.nan
    return statistics.claim_p(estimate, _expect(claim), _margin(claim))


def _expect(claim: Claim) -> statistics.Expect:
    """ "no worse" (d ≥ −margin) is a floor under d: judged as "at least" −margin."""
    return "at least" if claim.expect == "no worse" else claim.expect


def _margin(claim: Claim) -> float | None:
    """What ``statistics.judge`` calls the margin: the equivalence margin, or a floor."""
    if claim.expect == "at least":
        return claim.floor
    if claim.expect == "no worse":
        return -claim.margin
    return claim.margin if claim.expect == "within" else None


def _judged(claim: Claim, m: Measured, adjusted: float | None) -> Measured:
    if m.effect is None:
        return replace(m, verdict=statistics.NOT_MEASURED)
    failed = m.failed
    if failed is not None:
        return replace(m, verdict=statistics.UNTESTABLE, note=f"{failed.name}: {failed.detail}")
    verdict = statistics.judge(m.effect, _expect(claim), _paper(claim), _margin(claim), adjusted)
    return replace(m, verdict=verdict, adjusted_p=math.nan if adjusted is None else adjusted)


def _paper(claim: Claim) -> float | None:
    """The paper's effect where the verdict compares with it: not for floors (a floor is the claim)."""
    return None if claim.expect in ("at least", "no worse") else claim.paper_effect


def _judged_conditions(row: Row) -> list[Measured]:
    return [m for m in row.measured if m.verdict not in (statistics.NOT_MEASURED, statistics.UNTESTABLE)]


def _estimate(row: Row) -> statistics.Estimate | None:
    """The claim's overall estimate: its one judged condition's effect, or the conditions pooled."""
    judged = _judged_conditions(row)
    if len(judged) == 1:
        return judged[0].effect
    if not judged:
        return None
    pooled = statistics.pooled([m.effect for m in judged if m.effect is not None])
    return pooled if math.isfinite(pooled.d) else None


def _overall(row: Row, estimate: statistics.Estimate | None, adjusted: float) -> Row:
    judged = _judged_conditions(row)
    if estimate is None or not judged:
        untestable = [m for m in row.measured if m.verdict == statistics.UNTESTABLE]
        verdict = statistics.UNTESTABLE if untestable else statistics.NOT_MEASURED
        note = row.note or (
            untestable[0].note if untestable else row.measured[0].note if row.measured else ""
        )
        return replace(row, verdict=verdict, note=note)
    claim, p = row.claim, adjusted if math.isfinite(adjusted) else None
    if claim.pooled and len(judged) > 1:  # the paper claims the average: the pooled estimate decides
        verdict = statistics.judge(estimate, _expect(claim), _paper(claim), _margin(claim), p)
    else:
        effects = [m.effect for m in judged if m.effect is not None]
        verdicts = [m.verdict for m in judged]
        verdict = statistics.overall(
            effects, verdicts, _expect(claim), _paper(claim), _margin(claim), adjusted_p=p
        )
    return replace(row, verdict=verdict, overall=estimate, overall_adjusted_p=adjusted)


def scope(claim: Claim) -> str:
    if claim.condition is not None:
        return f"condition {claim.condition}"
    variant = f", {claim.variant} lists" if claim.variant else ""
    return f"{'/'.join(claim.kinds)} conditions{variant}"


def _assess_cost(claim: Claim, cost: pd.DataFrame | None) -> Row:
    if cost is None:
        note = "no cost file given: `rankuq findings RUN_DIR… --cost FILE`, FILE from method_cost --out"
        return Row(claim, None, (), statistics.NOT_MEASURED, note)
    measured = tuple(m for _, rows in cost.groupby("layers") if (m := _measure_cost(claim, rows)) is not None)
    note = "" if measured else f"the cost file has no timings of {claim.method} and {claim.compared()}"
    return Row(claim, None, measured, statistics.NOT_MEASURED, note, command=str(cost.command.iloc[0]))


def _measure_cost(claim: Claim, rows: pd.DataFrame) -> Measured | None:
    """The claim at one MiniLM depth. Its metric "time (× X)" is, per timed repeat, a method's time
    over X's in the same repeat (the methods take turns within a repeat); the repeats are resampled as
    queries are (one seed)."""
    denominator = claim.metric.removeprefix("time (× ").removesuffix(")")

    def times(method: str) -> np.ndarray | None:
        timed = rows[rows.method == method]
        if timed.label.nunique() != 1:  # absent, or several settings of it (last_layer_mc's T)
            return None
        return timed.sort_values("repeat").seconds.to_numpy(dtype=float)

    methods = [claim.method] if claim.floor is not None else [claim.method, str(claim.against)]
    base, timed = times(denominator), [times(m) for m in methods]
    if base is None or any(t is None or len(t) != len(base) for t in timed):
        return None
    repeats = np.array([str(r) for r in range(len(base))])
    sides = [{0: QueryParts(repeats, (t / base)[:, None], "mean")} for t in timed if t is not None]
    first = rows.iloc[0]
    versus = f"; vs {rows[rows.method == claim.against].label.iloc[0]}" if len(methods) > 1 else ""
    values = side_values(sides)
    return Measured(
        f"MiniLM-L{first.layers}, {first.pairs} WikiQA test pairs, {first.precision}{versus}",
        bootstrap(sides, contrast(claim, len(sides))),
        values[0],
        claim.floor if claim.floor is not None else values[1],
        unit="timed repeats",
    )
