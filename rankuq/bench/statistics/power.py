"""Power: what the data can detect (``minimum_detectable_effect``) and how much more data would
detect the paper's effect (``scale_for_power``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from rankuq.bench.statistics.bootstrap import Effect, Estimate
from rankuq.bench.statistics.judging import ALPHA


def _z(alpha: float, power: float) -> float:
    return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))


def minimum_detectable_effect(effect: Estimate, alpha: float = ALPHA, power: float = 0.8) -> float:
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


def scale_for_power(effect: Effect, target: float, alpha: float = ALPHA, power: float = 0.8) -> Scale:
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
