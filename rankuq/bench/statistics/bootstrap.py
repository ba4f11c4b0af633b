"""The effect of one comparison from a paired two-level bootstrap (``paired_bootstrap``): d, its
95 % and 90 % percentile intervals, standard error and p-value from a bootstrap over seeds, then
queries (one query resample for every side: paired).

A claim compares, in one condition, one or more *sides* (the method's metric and its reference).
Each side holds, per seed, one row of *parts* per query (``n_queries × k``); a side's metric on a set
of query rows is ``statistic(rows) -> float``. All sides of a comparison hold the same queries in the
same row order within a seed (paired). ``contrast(values) -> float`` maps the sides' values of one
seed to the effect d of that seed; the effect is the mean of d over the seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from rankuq.bench.statistics.contrasts import Contrast
from rankuq.bench.statistics.parts import BatchStatistic, Statistic, SumStatistic

Design = Literal["nested", "crossed"]
# How a replicate combines its seeds: "contrasts", the mean of the seeds' contrasts (d of each seed,
# then averaged); "values", the contrast of the sides' values averaged over the seeds (a ratio of
# means for a relative contrast, so that one seed with a reference near 0 cannot dominate d).
Pool = Literal["contrasts", "values"]

# Resamples per block: replicates × queries × the widest side's parts at most this many (8 MiB of
# float64 per stacked side). It depends on the data's shape only, so every kind of statistic sees the
# same random draws.
_BLOCK_ELEMENTS = 1 << 20


class Estimate(Protocol):
    """What ``judge`` reads: an ``Effect`` (bootstrap) or a ``Pooled`` estimate (normal)."""

    @property
    def d(self) -> float: ...

    @property
    def se(self) -> float: ...

    @property
    def p(self) -> float: ...

    def interval(self, level: float = 0.95) -> tuple[float, float]: ...

    def one_sided_p(self, threshold: float, above: bool) -> float: ...


@dataclass(frozen=True, eq=False)
class Effect:
    """One comparison's effect from ``paired_bootstrap``.

    ``d``: mean over seeds of the seed's contrast; ``low``/``high``: 95 % percentile interval;
    ``low90``/``high90``: 90 % (for TOST); ``se``: standard deviation of the replicates; ``p``:
    two-sided bootstrap p for d = 0; ``p_floor``: the smallest p the replicates can give, 2 / (1 + B);
    ``p_at_floor``: no replicate on the other side of 0 (p is then a bound: print ``p_text``).
    ``between_variance`` / ``within_variance``: the variance of d due to the seeds and to the queries
    at the current data (``scale_for_power``), ``between_known`` False with one seed."""

    d: float
    low: float
    high: float
    low90: float
    high90: float
    se: float
    p: float
    p_floor: float
    p_at_floor: bool
    n_seeds: int
    n_queries: tuple[int, ...]
    design: Design
    seed_contrasts: np.ndarray = field(repr=False)
    replicates: np.ndarray = field(repr=False)
    between_variance: float
    within_variance: float
    between_known: bool
    dropped: int = 0  # replicates with a non-finite contrast (e.g. a ratio over a zero), left out

    @property
    def resamples(self) -> int:
        """The number of (finite) replicates B."""
        return int(self.replicates.size)

    @property
    def mean_queries(self) -> float:
        return float(np.mean(self.n_queries)) if self.n_queries else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def ci90(self) -> tuple[float, float]:
        return self.low90, self.high90

    @property
    def p_text(self) -> str:
        """The p-value as a report prints it: ``p < 2e-04`` where no replicate crossed 0."""
        if math.isnan(self.p):
            return "p = n/a"
        if self.p_at_floor:
            return f"p < {self.p_floor:.0e}" if self.p_floor < 1 else "p = 1"
        return f"p = {self.p:.2g}" if self.p < 0.01 else f"p = {self.p:.3f}"

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The percentile interval of the replicates at ``level``."""
        if self.replicates.size == 0:
            return math.nan, math.nan
        tail = (1 - level) / 2
        low, high = np.quantile(self.replicates, [tail, 1 - tail])
        return float(low), float(high)

    def one_sided_p(self, threshold: float, above: bool) -> float:
        """Bootstrap p of "d ≤ threshold" (``above``: the alternative is d > threshold) or of
        "d ≥ threshold": (1 + #replicates on the null's side, ties included) / (1 + B)."""
        if self.replicates.size == 0:
            return math.nan
        null_side = self.replicates <= threshold if above else self.replicates >= threshold
        return float((1 + np.count_nonzero(null_side)) / (1 + self.replicates.size))


def paired_bootstrap(
    sides: Sequence[Sequence[np.ndarray]],
    statistics: Sequence[Statistic],
    contrast: Callable[[np.ndarray], float],
    resamples: int = 10_000,
    seed: int = 0,
    design: Design = "nested",
    pool: Pool = "contrasts",
) -> Effect:
    """The effect of one comparison with a paired two-level bootstrap (seeds, then queries).

    ``sides[j][s]``: side j's rows of seed s (``n_s × k_j``; a 1-D array is one column);
    ``statistics[j](rows) -> float``: side j's metric; ``contrast(values) -> float``: the seed's
    effect from the sides' values. d = mean over seeds of the contrast on every query of the seed.

    A replicate draws S seeds with replacement; ``design="nested"`` (as each seed had its own query
    sample) draws, for every drawn seed, its n_s queries with replacement; ``"crossed"`` (every seed
    scores the same queries, row i of every seed the same query: this project's grids, whose lists
    are cut with data seed 0) draws one query resample per replicate and uses it for every drawn
    seed. Either way the same query indices serve every side (paired). The replicate is the mean of
    the drawn seeds' contrasts (``pool="contrasts"``), or the contrast of the sides' values averaged
    over the drawn seeds (``pool="values"``: d = contrast(mean over seeds of each side's value), a
    ratio of means where the contrast is relative). The 95 %/90 % intervals are the replicates'
    percentiles, se their standard deviation, p = min(1, 2 (1 + #replicates ≤ 0) / (1 + B)) for
    d > 0 (≥ 0 for d < 0; p = 1 for d = 0). ``np.random.default_rng(seed)``: the same seed gives the
    same numbers.
    """
    if resamples < 2:
        raise ValueError("resamples must be at least 2")
    if not sides or len(sides) != len(statistics):
        raise ValueError("one statistic per side, at least one side")
    data = [[_as_rows(rows) for rows in side] for side in sides]
    n_seeds = len(data[0])
    if n_seeds == 0 or any(len(side) != n_seeds for side in data):
        raise ValueError("every side needs the same seeds, at least one")
    n_queries = tuple(len(data[0][s]) for s in range(n_seeds))
    for side in data:
        if tuple(len(rows) for rows in side) != n_queries:
            raise ValueError("every side needs the same queries per seed (paired rows)")
    if min(n_queries) == 0:
        raise ValueError("a seed without queries")
    if design == "crossed" and len(set(n_queries)) != 1:
        raise ValueError("design='crossed' needs the same queries (rows) in every seed")
    if design not in ("nested", "crossed"):
        raise ValueError(f"unknown design {design!r}")
    if pool not in ("contrasts", "values"):
        raise ValueError(f"unknown pool {pool!r}")
    by_seed = [[side[s] for side in data] for s in range(n_seeds)]
    seed_values = np.array(
        [
            [statistic(rows) for statistic, rows in zip(statistics, seed_rows, strict=True)]
            for seed_rows in by_seed
        ]
    )
    with np.errstate(divide="ignore", invalid="ignore"):  # a seed's relative d over 0: no finite estimate
        seed_contrasts = np.array([float(contrast(v)) for v in seed_values])
        d = float(seed_contrasts.mean() if pool == "contrasts" else contrast(seed_values.mean(axis=0)))

    rng = np.random.default_rng(seed)
    choice = rng.integers(0, n_seeds, size=(resamples, n_seeds))
    resample = _nested if design == "nested" else _crossed
    replicates, within, seed_query_variance = resample(by_seed, statistics, contrast, choice, rng, pool)
    finite = np.isfinite(replicates)
    dropped = int(resamples - np.count_nonzero(finite))
    replicates = replicates[finite]
    replicates.setflags(write=False)
    seed_contrasts.setflags(write=False)

    between_known = n_seeds >= 2
    if between_known:
        with np.errstate(invalid="ignore"):  # an undefined seed's d (above): no spread either
            spread = float(np.var(seed_contrasts, ddof=1))
        # Nested: the seeds' contrasts also vary by their own query samples (mean of the seeds' query
        # variances): that part is taken out. Crossed: every seed has the same queries, their spread
        # is the seeds' own.
        between = max(0.0, spread - seed_query_variance) if design == "nested" else spread
        between /= n_seeds
    else:
        between = 0.0
    return _effect(
        d, replicates, n_seeds, n_queries, design, seed_contrasts, between, within, between_known, dropped
    )


def _as_rows(rows: np.ndarray) -> np.ndarray:
    array = np.asarray(rows, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError("a seed's rows must be a 2-D array (queries × parts)")
    return np.ascontiguousarray(array)


def _nested(
    by_seed: list[list[np.ndarray]],
    statistics: Sequence[Statistic],
    contrast: Callable[[np.ndarray], float],
    choice: np.ndarray,
    rng: np.random.Generator,
    pool: Pool = "contrasts",
) -> tuple[np.ndarray, float, float]:
    """Every drawn seed slot gets its own query resample; returns the replicates, the query part of
    the variance of d and the mean over seeds of a seed contrast's query variance."""
    resamples, n_seeds = choice.shape
    sides = len(by_seed[0])
    values = np.empty((choice.size, sides))
    flat = choice.ravel()
    variances = np.empty(n_seeds)
    for s, seed_rows in enumerate(by_seed):
        slots = np.flatnonzero(flat == s)
        n = len(seed_rows[0])
        block = _block(n, seed_rows)
        for start in range(0, slots.size, block):
            index = rng.integers(0, n, size=(min(block, slots.size - start), n))
            values[slots[start : start + block]] = _values(seed_rows, statistics, index)
        variances[s] = _nanvar(_apply(contrast, values[slots]))
    if pool == "contrasts":
        replicates = _apply(contrast, values).reshape(resamples, n_seeds).mean(axis=1)
    else:
        replicates = _apply(contrast, values.reshape(resamples, n_seeds, sides).mean(axis=1))
    seed_query_variance = float(np.nanmean(variances)) if np.isfinite(variances).any() else math.nan
    return replicates, seed_query_variance / n_seeds, seed_query_variance


def _crossed(
    by_seed: list[list[np.ndarray]],
    statistics: Sequence[Statistic],
    contrast: Callable[[np.ndarray], float],
    choice: np.ndarray,
    rng: np.random.Generator,
    pool: Pool = "contrasts",
) -> tuple[np.ndarray, float, float]:
    """One query resample per replicate, shared by every seed; a replicate weighs each seed (its
    contrast, or its sides' values: ``pool``) by how often the seed was drawn. The query part of the
    variance of d is the variance, over the query resamples, of d with every seed once (the seeds
    held fixed)."""
    resamples, n_seeds = choice.shape
    offsets = (np.arange(resamples) * n_seeds)[:, None]
    counts = np.bincount((choice + offsets).ravel(), minlength=resamples * n_seeds)
    counts = counts.reshape(resamples, n_seeds)
    n = len(by_seed[0][0])
    sides = len(by_seed[0])
    values = np.empty((resamples, n_seeds, sides))
    block = _block(n, [rows for seed_rows in by_seed for rows in seed_rows])
    for start in range(0, resamples, block):
        index = rng.integers(0, n, size=(min(block, resamples - start), n))
        for s, seed_rows in enumerate(by_seed):
            values[start : start + len(index), s] = _values(seed_rows, statistics, index)
    per_seed = _apply(contrast, values.reshape(-1, sides)).reshape(resamples, n_seeds)
    if pool == "contrasts":
        # A seed drawn 0 times must not turn its non-finite contrast into nan × 0.
        weighted = np.where(counts > 0, per_seed, 0.0) * counts
        replicates = weighted.sum(axis=1) / n_seeds
        within = _nanvar(per_seed.mean(axis=1))
    else:
        drawn = np.where(counts[..., None] > 0, values, 0.0) * counts[..., None]
        replicates = _apply(contrast, drawn.sum(axis=1) / n_seeds)
        within = _nanvar(_apply(contrast, values.mean(axis=1)))
    variances = np.array([_nanvar(per_seed[:, s]) for s in range(n_seeds)])
    seed_query_variance = float(np.nanmean(variances)) if np.isfinite(variances).any() else math.nan
    return replicates, within, seed_query_variance


def _block(n: int, rows: Sequence[np.ndarray]) -> int:
    return max(1, _BLOCK_ELEMENTS // (n * max(int(r.shape[1]) for r in rows)))


def _values(seed_rows: list[np.ndarray], statistics: Sequence[Statistic], index: np.ndarray) -> np.ndarray:
    """The sides' values (``draws × sides``) on each resample (a row of ``index``: query indices) of
    one seed. A resample where a statistic is undefined (0 / 0) gives nan, dropped later, without a
    warning."""
    draws, n = index.shape
    values = np.empty((draws, len(seed_rows)))
    weights: np.ndarray | None = None
    with np.errstate(divide="ignore", invalid="ignore"):
        for j, (rows, statistic) in enumerate(zip(seed_rows, statistics, strict=True)):
            if isinstance(statistic, SumStatistic):
                if weights is None:  # how often each query is drawn: one bincount for the whole block
                    shifted = (index + (np.arange(draws) * n)[:, None]).ravel()
                    weights = np.bincount(shifted, minlength=draws * n).reshape(draws, n).astype(float)
                values[:, j] = statistic.function(weights @ rows, n)
            elif isinstance(statistic, BatchStatistic):
                values[:, j] = np.asarray(statistic.function(rows[index]), dtype=float).reshape(draws)
            else:
                for i in range(draws):
                    values[i, j] = statistic(rows[index[i]])
    return values


def _apply(contrast: Callable[[np.ndarray], float], values: np.ndarray) -> np.ndarray:
    """The contrast of each row of sides' values (``draws × sides``); nan where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if isinstance(contrast, Contrast):
            return np.asarray(contrast.function(values.T), dtype=float).reshape(len(values))
        return np.fromiter((contrast(v) for v in values), dtype=float, count=len(values))


def _nanvar(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(np.var(finite, ddof=1)) if finite.size >= 2 else math.nan


def _effect(
    d: float,
    replicates: np.ndarray,
    n_seeds: int,
    n_queries: tuple[int, ...],
    design: Design,
    seed_contrasts: np.ndarray,
    between: float,
    within: float,
    between_known: bool,
    dropped: int,
) -> Effect:
    resamples = replicates.size
    p_floor = min(1.0, 2 / (1 + resamples)) if resamples else math.nan
    nan = math.nan
    if not math.isfinite(d) or resamples < 2:  # no interval, no test
        low = high = low90 = high90 = se = p = nan
        at_floor = False
    else:
        low, high = (float(q) for q in np.quantile(replicates, [0.025, 0.975]))
        low90, high90 = (float(q) for q in np.quantile(replicates, [0.05, 0.95]))
        se = float(np.std(replicates, ddof=1))
        if d == 0:
            p, at_floor = 1.0, False
        else:
            other_side = np.count_nonzero(replicates <= 0 if d > 0 else replicates >= 0)
            p = min(1.0, 2 * (1 + int(other_side)) / (1 + resamples))
            at_floor = bool(other_side == 0)
    return Effect(
        d,
        low,
        high,
        low90,
        high90,
        se,
        p,
        p_floor,
        at_floor,
        n_seeds,
        n_queries,
        design,
        seed_contrasts,
        replicates,
        between,
        within,
        between_known,
        dropped,
    )
