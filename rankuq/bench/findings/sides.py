"""The sides of a claim's comparison and its effect: each side's per-query parts per seed
(``sides_of``), aligned on the queries every side has (``aligned``), the seed's effect d in the
paper's terms (``contrast``) and the paired bootstrap over seeds and queries (``bootstrap``); shared by
the verdicts, the preconditions and the cost claims."""

import hashlib
import json

import numpy as np

from rankuq.bench import statistics
from rankuq.bench.findings import conditions
from rankuq.bench.findings.claims import Claim
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.statistics.parts import STATISTICS, QueryParts

Sides = list[dict[int, QueryParts]]


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
        return np.asarray((v[0] - best) / np.abs(best))

    return statistics.Contrast(best_relative, "(v0 − max of the others) / |max|")


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


def bootstrap(
    sides: Sides, d: statistics.Contrast, pool: statistics.Pool = "contrasts"
) -> statistics.Effect | None:
    """The paired bootstrap of the sides on their common queries: the crossed design, as every seed of
    a grid scores the same test queries (one query resample serves every seed of a replicate);
    ``pool``: how the seeds combine (``statistics.paired_bootstrap``)."""
    found = aligned(sides)
    if found is None or any(len(r) == 0 for seed_rows in found[0] for r in seed_rows):
        return None
    rows, names = found
    chosen = [STATISTICS[name] for name in names]
    return statistics.paired_bootstrap(rows, chosen, d, design="crossed", pool=pool)


def digest(claim: Claim, sides: Sides) -> str:
    """What makes a comparison the test it is: the claim's comparison (metric, reference, floor, scale,
    direction, margin) and every side's per-query values per seed, bit for bit. Two grids that share
    cells (the same predictions, so the same values) give one digest: one test, counted once."""
    found = hashlib.sha256()
    comparison = [claim.metric, claim.reference, claim.floor, claim.scale, claim.expect, claim.margin]
    found.update(json.dumps([*comparison, claim.baseline_condition is not None], default=str).encode())
    for side in sides:
        for seed in sorted(side):
            parts = side[seed]
            qids = "\x1f".join(map(str, parts.qids))
            found.update(f"|{seed}|{parts.statistic}|{qids}|".encode())
            found.update(np.ascontiguousarray(parts.rows, dtype=float).tobytes())
    return found.hexdigest()[:16]


def side_values(sides: Sides) -> list[float]:
    """Each side's metric on all its queries, mean over seeds."""
    return [float(np.mean([parts.value() for parts in side.values()])) for side in sides]


def sides_of(claim: Claim, run: FinishedRun, condition: str) -> tuple[Sides, str] | str:
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


def no_shift_condition(run: FinishedRun, condition: str) -> str | None:
    """The in-domain condition of ``run`` that tests the same lists as ``condition`` (the same task,
    negative sampling and list variant), trained on that task with those lists' own negatives: the
    reference a shift is measured against (Penha & Hauff 2021, Table 1). A cross-NS condition's
    reference is the model trained with the tested negatives, not the one it was trained as."""
    return conditions.no_shift(run.conditions, run.tested[condition], run.kinds[condition][1])


def source_condition(run: FinishedRun, condition: str) -> str | None:
    """Where ``condition``'s ranker was trained: the in-domain condition with the same training side
    that tests on its training task (the condition itself when it is in-domain); the lists of the same
    variant first."""
    if run.kinds[condition][0] == "in-domain":
        return condition
    train = run.trained.get(condition)
    return None if train is None else conditions.source(run.conditions, train, run.kinds[condition][1])
