"""One statistical procedure for every claim: effects with a paired two-level bootstrap,
power, Benjamini–Hochberg, and the verdict taxonomy. docs/statistics.md states the procedure.

A claim compares, in one condition, one or more *sides* (the method's metric and its reference).
Each side holds, per seed, one row of *parts* per query (``n_queries × k``); a side's metric on a set
of query rows is ``statistic(rows) -> float``. All sides of a comparison hold the same queries in the
same row order within a seed (paired). ``contrast(values) -> float`` maps the sides' values of one
seed to the effect d of that seed; the effect is the mean of d over the seeds.

- ``paired_bootstrap``: d, its 95 % and 90 % percentile intervals, standard error and p-value from a
  bootstrap over seeds, then queries (one query resample for every side: paired).
- ``minimum_detectable_effect``, ``scale_for_power``: what the data can detect, and how much more
  data would detect the paper's effect.
- ``benjamini_hochberg``: adjusted p-values over the registry.
- ``judge``, ``pooled``, ``overall``: the verdict of a condition and of a claim over its conditions.

Statistics that are functions of the rows' column sums (``SumStatistic``: ``mean``,
``ratio_of_means``, a pooled ECE from per-query bin sums), statistics that take a stack of resamples
(``BatchStatistic``: nAUC written over a leading axis) and contrasts built with ``Contrast``
(``difference``, ``relative``, ``over_best``, ``value``) run vectorised over the replicates; any
other callable runs in a loop, on the same resampled indices (the numbers agree to rounding).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
from scipy import stats

REPRODUCED = "reproduced"
REFUTED = "refuted"
SMALLER = "smaller than reported"
INCONCLUSIVE = "inconclusive"
UNTESTABLE = "untestable"
MIXED = "mixed"
NOT_MEASURED = "not measured"

DEFINITIONS: dict[str, str] = {
    REPRODUCED: "the 95 % CI excludes 0 in the paper's direction and the BH-adjusted p < 0.05 "
    "(within a margin: the 90 % CI lies inside ±margin, TOST; a floor: the 95 % CI lies above it)",
    REFUTED: "the 95 % CI excludes 0 against the paper's direction and the BH-adjusted p < 0.05 "
    "(within a margin: the 95 % CI lies outside ±margin; a floor: the 95 % CI lies below it)",
    SMALLER: "no significant effect, and the 95 % CI excludes the paper's effect (it stops short of it)",
    INCONCLUSIVE: "the 95 % CI covers both 0 and the paper's effect (or straddles the margin or "
    "floor): this data cannot tell; the row gives the minimum detectable effect and the data needed",
    UNTESTABLE: "a named precondition fails (the ranker is not above BM25, the shift does not degrade "
    "the model, the metric has no headroom, the selection is degenerate)",
    MIXED: "over conditions only: they significantly disagree (Cochran's Q p < 0.05 and at least "
    "one condition reproduced and one refuted)",
    NOT_MEASURED: "no run directory holds the claim's values, or they give no finite estimate",
}

Expect = Literal["higher", "lower", "within", "at least"]
Design = Literal["nested", "crossed"]
Statistic = Callable[[np.ndarray], float]

# Resamples per block: replicates × queries × the widest side's parts at most this many (8 MiB of
# float64 per stacked side). It depends on the data's shape only, so every kind of statistic sees the
# same random draws.
_BLOCK_ELEMENTS = 1 << 20


# ---------------------------------------------------------------------------------------------------
# Statistics and contrasts that vectorise over replicates


@dataclass(frozen=True)
class SumStatistic:
    """A statistic that depends on the rows only through their column sums and their number:
    ``function(sums, n)`` with ``sums`` of shape ``(..., k)`` (a leading axis of replicates) returns
    shape ``(...)``. A bootstrap resample is then a weight vector (how often each query was drawn),
    and every replicate's sums are one matrix product. Calling it on rows gives the plain value."""

    function: Callable[[np.ndarray, int], np.ndarray]
    name: str = "statistic of sums"

    def __call__(self, rows: np.ndarray) -> float:
        rows = np.asarray(rows, dtype=float)
        return float(self.function(rows.sum(axis=0), len(rows)))


def mean(column: int = 0) -> SumStatistic:
    """The mean of one column over the queries (a per-query metric: parts ``(n, 1)``)."""
    return SumStatistic(lambda sums, n: sums[..., column] / n, f"mean of column {column}")


def ratio_of_means(numerator: int = 0, denominator: int = 1) -> SumStatistic:
    """mean(column ``numerator``) / mean(column ``denominator``) = the ratio of their sums."""
    return SumStatistic(
        lambda sums, n: sums[..., numerator] / sums[..., denominator],
        f"ratio of columns {numerator} / {denominator}",
    )


@dataclass(frozen=True)
class BatchStatistic:
    """A statistic that needs the rows themselves (nAUC, a rank correlation) but takes a stack of
    resamples at once: ``function(rows)`` with ``rows`` of shape ``(..., n, k)`` returns shape
    ``(...)``, so the replicates cost a few array operations instead of a Python call each.
    Calling it on one seed's rows ``(n, k)`` gives the plain value."""

    function: Callable[[np.ndarray], np.ndarray]
    name: str = "batched statistic"

    def __call__(self, rows: np.ndarray) -> float:
        rows = np.asarray(rows, dtype=float)
        return float(np.asarray(self.function(rows[None]))[0])


@dataclass(frozen=True)
class Contrast:
    """A contrast that also takes a batch: ``function(values)`` with the sides on axis 0 and any
    later axes (replicates) carried along, e.g. ``lambda v: v[0] - v[1:].max(axis=0)``."""

    function: Callable[[np.ndarray], np.ndarray]
    name: str = "contrast"

    def __call__(self, values: np.ndarray) -> float:
        return float(self.function(np.asarray(values, dtype=float)))


def difference(side: int = 0, reference: int = 1) -> Contrast:
    """d = v[side] − v[reference]."""
    return Contrast(lambda v: v[side] - v[reference], f"v{side} − v{reference}")


def relative(side: int = 0, reference: int = 1) -> Contrast:
    """d = (v[side] − v[reference]) / |v[reference]| (a relative effect, as a fraction)."""
    name = f"(v{side} − v{reference}) / |v{reference}|"
    return Contrast(lambda v: (v[side] - v[reference]) / np.abs(v[reference]), name)


def over_best(side: int = 0) -> Contrast:
    """d = v[side] − the best (largest) of the other sides."""

    def function(v: np.ndarray) -> np.ndarray:
        others = np.delete(v, side, axis=0)
        return v[side] - others.max(axis=0)

    return Contrast(function, f"v{side} − max of the others")


def value(side: int = 0) -> Contrast:
    """d = v[side] itself (a value against a floor: ``judge(..., "at least", margin=floor)``)."""
    return Contrast(lambda v: v[side], f"v{side}")


# ---------------------------------------------------------------------------------------------------
# Effects


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
    the drawn seeds' contrasts. The 95 %/90 % intervals are the replicates' percentiles, se their
    standard deviation, p = min(1, 2 (1 + #replicates ≤ 0) / (1 + B)) for d > 0 (≥ 0 for d < 0;
    p = 1 for d = 0). ``np.random.default_rng(seed)``: the same seed gives the same numbers.
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
    by_seed = [[side[s] for side in data] for s in range(n_seeds)]
    seed_values = np.array(
        [
            [statistic(rows) for statistic, rows in zip(statistics, seed_rows, strict=True)]
            for seed_rows in by_seed
        ]
    )
    seed_contrasts = np.array([float(contrast(v)) for v in seed_values])
    d = float(seed_contrasts.mean())

    rng = np.random.default_rng(seed)
    choice = rng.integers(0, n_seeds, size=(resamples, n_seeds))
    if design == "nested":
        replicates, within, seed_query_variance = _nested(by_seed, statistics, contrast, choice, rng)
    else:
        replicates, within, seed_query_variance = _crossed(by_seed, statistics, contrast, choice, rng)
    finite = np.isfinite(replicates)
    dropped = int(resamples - np.count_nonzero(finite))
    replicates = replicates[finite]
    replicates.setflags(write=False)
    seed_contrasts.setflags(write=False)

    between_known = n_seeds >= 2
    if between_known:
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
) -> tuple[np.ndarray, float, float]:
    """Every drawn seed slot gets its own query resample; returns the replicates, the query part of
    the variance of d and the mean over seeds of a seed contrast's query variance."""
    resamples, n_seeds = choice.shape
    draws = np.empty(choice.size)
    flat = choice.ravel()
    variances = np.empty(n_seeds)
    for s, seed_rows in enumerate(by_seed):
        slots = np.flatnonzero(flat == s)
        n = len(seed_rows[0])
        block = _block(n, seed_rows)
        for start in range(0, slots.size, block):
            index = rng.integers(0, n, size=(min(block, slots.size - start), n))
            draws[slots[start : start + block]] = _contrasts(seed_rows, statistics, contrast, index)
        variances[s] = _nanvar(draws[slots])
    replicates = draws.reshape(resamples, n_seeds).mean(axis=1)
    seed_query_variance = float(np.nanmean(variances)) if np.isfinite(variances).any() else math.nan
    return replicates, seed_query_variance / n_seeds, seed_query_variance


def _crossed(
    by_seed: list[list[np.ndarray]],
    statistics: Sequence[Statistic],
    contrast: Callable[[np.ndarray], float],
    choice: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float, float]:
    """One query resample per replicate, shared by every seed; a replicate weighs each seed's
    contrast by how often the seed was drawn. The query part of the variance of d is the variance,
    over the query resamples, of the mean of every seed's contrast (the seeds held fixed)."""
    resamples, n_seeds = choice.shape
    offsets = (np.arange(resamples) * n_seeds)[:, None]
    counts = np.bincount((choice + offsets).ravel(), minlength=resamples * n_seeds)
    counts = counts.reshape(resamples, n_seeds)
    n = len(by_seed[0][0])
    per_seed = np.empty((resamples, n_seeds))
    block = _block(n, [rows for seed_rows in by_seed for rows in seed_rows])
    for start in range(0, resamples, block):
        index = rng.integers(0, n, size=(min(block, resamples - start), n))
        for s, seed_rows in enumerate(by_seed):
            per_seed[start : start + len(index), s] = _contrasts(seed_rows, statistics, contrast, index)
    # A seed drawn 0 times must not turn its non-finite contrast into nan × 0.
    weighted = np.where(counts > 0, per_seed, 0.0) * counts
    replicates = weighted.sum(axis=1) / n_seeds
    within = _nanvar(per_seed.mean(axis=1))
    variances = np.array([_nanvar(per_seed[:, s]) for s in range(n_seeds)])
    seed_query_variance = float(np.nanmean(variances)) if np.isfinite(variances).any() else math.nan
    return replicates, within, seed_query_variance


def _block(n: int, rows: Sequence[np.ndarray]) -> int:
    return max(1, _BLOCK_ELEMENTS // (n * max(r.shape[1] for r in rows)))


def _contrasts(
    seed_rows: list[np.ndarray],
    statistics: Sequence[Statistic],
    contrast: Callable[[np.ndarray], float],
    index: np.ndarray,
) -> np.ndarray:
    """The contrast on each resample (a row of ``index``: query indices) of one seed. A resample
    where a statistic is undefined (0 / 0) gives nan, dropped later, without a warning."""
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
        if isinstance(contrast, Contrast):
            return np.asarray(contrast.function(values.T), dtype=float).reshape(draws)
        return np.fromiter((contrast(v) for v in values), dtype=float, count=draws)


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
    if not math.isfinite(d) or resamples < 2:
        nan = math.nan
        return Effect(
            d,
            nan,
            nan,
            nan,
            nan,
            nan,
            nan,
            p_floor,
            False,
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
    low, high = np.quantile(replicates, [0.025, 0.975])
    low90, high90 = np.quantile(replicates, [0.05, 0.95])
    se = float(np.std(replicates, ddof=1))
    if d == 0:
        p, at_floor = 1.0, False
    else:
        other_side = np.count_nonzero(replicates <= 0 if d > 0 else replicates >= 0)
        p = min(1.0, 2 * (1 + int(other_side)) / (1 + resamples))
        at_floor = bool(other_side == 0)
    return Effect(
        d,
        float(low),
        float(high),
        float(low90),
        float(high90),
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


# ---------------------------------------------------------------------------------------------------
# Power


def _z(alpha: float, power: float) -> float:
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def minimum_detectable_effect(effect: Estimate, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest |d| a two-sided test at ``alpha`` detects with probability ``power`` at this
    data: (z_{1−α/2} + z_power) × SE (2.80 × SE at the defaults; normal approximation)."""
    return _z(alpha, power) * effect.se


@dataclass(frozen=True)
class Scale:
    """How much data would detect ``target`` (``scale_for_power``). ``factor``: the growth of the
    data as a whole (seeds × queries); ``seeds``: seeds needed at the current queries; ``queries``:
    queries per seed needed at the current seeds; None where that one alone cannot reach the power;
    ``between_share``: the seeds' share of the variance of d (0 assumed with one seed:
    ``between_known`` False, and then the numbers are lower bounds)."""

    factor: float
    seeds: int | None
    queries: int | None
    between_share: float
    between_known: bool
    n_seeds: int
    n_queries: float


def scale_for_power(effect: Effect, target: float, alpha: float = 0.05, power: float = 0.8) -> Scale:
    """By how much the data must grow so that a two-sided test at ``alpha`` detects ``target``
    with probability ``power``.

    Approximation: the SE shrinks as 1/sqrt(data), so the data must grow by
    factor = ((z_{1−α/2} + z_power) × SE / |target|)². Seeds and queries apart: the bootstrap
    variance SE² is split into a seed part π·SE² and a query part (1 − π)·SE², π from the
    replicates (``Effect.between_variance`` / (between + within)). With S0 seeds of n0 queries
    (the mean over seeds), S seeds of n queries give
    - nested design: SE²(S, n) = SE² · [π S0/S + (1 − π) S0 n0 / (S n)]: more seeds shrink both
      parts, so seeds = ⌈S0 · factor⌉ always; queries = ⌈n0 (1 − π) / (1/factor − π)⌉ when
      1/factor > π, else None (the seeds' part alone is too large);
    - crossed design (every seed scores the same queries): SE²(S, n) = SE² · [π S0/S + (1 − π) n0/n]:
      seeds = ⌈S0 π / (1/factor − (1 − π))⌉ when 1/factor > 1 − π, else None; queries likewise
      with π and 1 − π exchanged.
    The split rests on the spread of few seeds' contrasts (3 seeds: a rough estimate); with one
    seed π = 0 is assumed. ``target`` = 0 or an unknown SE: factor inf, seeds and queries None.
    """
    n_seeds, n_queries = effect.n_seeds, effect.mean_queries
    total = effect.between_variance + effect.within_variance
    share = effect.between_variance / total if math.isfinite(total) and total > 0 else 0.0
    if target == 0 or not math.isfinite(effect.se) or not math.isfinite(target):
        return Scale(math.inf, None, None, share, effect.between_known, n_seeds, n_queries)
    factor = (_z(alpha, power) * effect.se / abs(target)) ** 2
    if factor == 0:
        return Scale(0.0, 1, 1, share, effect.between_known, n_seeds, n_queries)
    room = 1 / factor  # the relative variance the target allows

    def needed(current: float, part: float, rest: float) -> int | None:
        # current × part / (room − rest): the size at which part/size + rest fits the room.
        if room <= rest:
            return None
        return max(1, math.ceil(current * part / (room - rest) - 1e-9))

    if effect.design == "nested":
        seeds: int | None = max(1, math.ceil(n_seeds * factor - 1e-9))
        queries = needed(n_queries, 1 - share, share)
    else:
        seeds = needed(n_seeds, share, 1 - share)
        queries = needed(n_queries, 1 - share, share)
    return Scale(factor, seeds, queries, share, effect.between_known, n_seeds, n_queries)


# ---------------------------------------------------------------------------------------------------
# Multiplicity


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (scipy.stats.false_discovery_control, method "bh"), in
    the input's order. NaNs stay NaN and do not count among the m tests."""
    p = np.asarray(p_values, dtype=float).ravel()
    adjusted = np.full(p.shape, math.nan)
    finite = ~np.isnan(p)
    if finite.any():
        adjusted[finite] = stats.false_discovery_control(p[finite], method="bh")
    return adjusted


def claim_p(effect: Estimate, expect: Expect, margin: float | None = None) -> float:
    """The p-value of the test that reproduces a claim, the one to adjust over the registry:
    "higher"/"lower": the two-sided p of d = 0; "within": the TOST p, max of the one-sided p's of
    d ≤ −margin and d ≥ margin (p < α ⇔ the (1 − 2α) interval inside ±margin); "at least": twice the
    one-sided p of d ≤ floor (``margin``), capped at 1 (p < α ⇔ the (1 − α) interval above it)."""
    if expect in ("higher", "lower"):
        return effect.p
    if margin is None:
        raise ValueError(f'"{expect}" needs a margin')
    if expect == "within":
        return max(effect.one_sided_p(-margin, above=True), effect.one_sided_p(margin, above=False))
    if expect == "at least":
        return min(1.0, 2 * effect.one_sided_p(margin, above=True))
    raise ValueError(f"unknown expect {expect!r}")


# ---------------------------------------------------------------------------------------------------
# Verdicts


def judge(
    effect: Estimate,
    expect: Expect,
    paper_effect: float | None,
    margin: float | None = None,
    adjusted_p: float | None = None,
    alpha: float = 0.05,
) -> str:
    """The verdict of one estimate (``DEFINITIONS``); CI = the (1 − α) interval, 95 % by default.

    "higher"/"lower": the effect is *significant* in a direction when the p (``adjusted_p``, the
    BH-adjusted ``claim_p``, where given, else the raw ``effect.p``) is below α AND the CI lies
    entirely on that side of 0; both are asked because the adjusted p decides whether there is an
    effect at all after multiplicity and the CI says which way (unadjusted, the bootstrap's p < α and
    its CI excluding 0 agree). Significant the paper's way: reproduced; the other way: refuted.
    Otherwise: smaller than reported when the CI stops short of the paper's effect (its upper end
    below it for "higher", its lower end above it for "lower"), else inconclusive. ``paper_effect``
    is in d's units and sign (negative for "lower"); None skips the smaller-than-reported test.

    "within" (``margin`` > 0): reproduced when the (1 − 2α) interval (90 %) lies strictly inside
    (−margin, margin), TOST, and, where given, the adjusted TOST p < α; refuted when the (1 − α) CI
    lies entirely outside (above margin or below −margin); else inconclusive.

    "at least" (``margin`` = the floor, d = the value): reproduced when the CI's lower end is above
    the floor (and the adjusted p < α where given); refuted when its upper end is below it; else
    inconclusive. A non-finite d or CI: not measured.
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
            return SMALLER
        return INCONCLUSIVE
    if margin is None:
        raise ValueError(f'"{expect}" needs a margin')
    if expect == "within":
        if margin <= 0:
            raise ValueError("the margin must be positive")
        low_tost, high_tost = effect.interval(1 - 2 * alpha)
        if -margin < low_tost and high_tost < margin and passes:
            return REPRODUCED
        if low > margin or high < -margin:
            return REFUTED
        return INCONCLUSIVE
    if expect == "at least":
        if low > margin and passes:
            return REPRODUCED
        if high < margin:
            return REFUTED
        return INCONCLUSIVE
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


def overall(
    effects: Sequence[Estimate],
    verdicts: Sequence[str],
    expect: Expect,
    paper_effect: float | None,
    margin: float | None = None,
    alpha: float = 0.05,
    adjusted_p: float | None = None,
) -> str:
    """A claim's verdict over its conditions, from the pooled estimate, never a vote.

    ``verdicts``: the conditions' own verdicts (``judge``'s, or untestable / not measured from the
    preconditions), in the order of ``effects``. Conditions judged untestable or not measured, or
    without a finite d, are left out; none left: untestable if any was, else not measured. One left:
    its own ``judge`` verdict (its bootstrap CI, not a normal one). Several: *mixed* when they
    significantly disagree, i.e. Cochran's Q p < α AND at least one of them is reproduced and
    another refuted; otherwise ``judge`` of the ``pooled`` estimate (``adjusted_p``: the claim's
    BH-adjusted pooled ``claim_p``, where the caller adjusts it).
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
    estimate = pooled([e for e, _ in kept])
    kept_verdicts = {v for _, v in kept}
    if estimate.q_p < alpha and REPRODUCED in kept_verdicts and REFUTED in kept_verdicts:
        return MIXED
    return judge(estimate, expect, paper_effect, margin, adjusted_p, alpha)
