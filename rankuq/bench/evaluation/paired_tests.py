"""The paired significance of each method against the grid's baseline: a paired t-test per query for
ranking metrics (papers 000 and 001), a paired bootstrap over queries for the calibration errors ECE,
ECE.all and ERCE and the scoring rules Brier and NLL, which pool candidates and have no per-query
value. For black-box TREC runs (``rankuq compare``) also Fisher's paired randomisation test (their
corrections are ``bench.statistics.corrections``)."""

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np
import pyarrow as pa

from rankuq.bench import metrics
from rankuq.bench.probes import ScoredLists, scored_lists
from rankuq.bench.probes.calibration import query_parts, scoring_rule_parts
from rankuq.bench.statistics.paired import paired_t
from rankuq.errors import RankuqError

# tested by the paired bootstrap over queries; only where both sides' scores are probabilities (the
# calibration errors and scoring rules bench.metrics declares: ECE, ECE.all, ERCE, Brier, NLL)
CALIBRATION_ERRORS = metrics.CALIBRATION_ERRORS
RESAMPLES = 1000
PERMUTATIONS = 10_000  # of the randomisation test (Smucker et al., 2007 used 10^5; 10^4 resolves p to 0.01)
BOOTSTRAP_SEED = 0
_RESAMPLE_CELLS = 1 << 22  # resample × query counts per block (32 MiB of int64)


T = TypeVar("T")


def seed_averaged(
    tables: Sequence[pa.Table], names: Sequence[str], qrels: pa.Table | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per-query metric values averaged over seeds (every seed scores the same queries): against
    ``qrels`` where given (every query of them), else the tables' labels (queries with a relevant one)."""
    per_seed = [
        metrics.per_query(t, names, qrels=qrels, drop_queries_without_relevant=qrels is None) for t in tables
    ]
    qids = per_seed[0][0]
    if any(not np.array_equal(qids, other) for other, _ in per_seed[1:]):
        raise RankuqError("the seeds of a cell scored different queries; clear the run's predictions cache")
    return qids, {name: np.mean([values[name] for _, values in per_seed], axis=0) for name in names}


def significance(
    tables: Mapping[str, Sequence[pa.Table]],
    baseline: str,
    names: Sequence[str],
    qrels: pa.Table | None = None,
) -> dict[str, dict[str, float]]:
    """method → metric → p-value against ``baseline``, for the methods of one condition (the
    baseline has none), over the queries with a relevant candidate (every query of ``qrels`` for
    the ranking metrics, where the lists are measured against them).

    Ranking metrics: a two-sided paired t-test on per-query values averaged over seeds. The
    calibration errors and scoring rules (``CALIBRATION_ERRORS``): ``bootstrap_p``, a paired
    bootstrap over queries; NaN for a method or baseline whose scores are not probabilities (the
    leaderboard shows none of their values: ERCE of raw scores, BM25's, says nothing).
    """
    ranking = [name for name in names if name not in CALIBRATION_ERRORS]
    calibration = [name for name in names if name in CALIBRATION_ERRORS]
    p_values: dict[str, dict[str, float]] = {method: {} for method in tables if method != baseline}
    if ranking:
        base, others = _same_queries(tables, baseline, lambda seeds, _: seed_averaged(seeds, ranking, qrels))
        for method, values in others.items():
            p_values[method] |= {name: paired_t(values[name], base[name]).p for name in ranking}
    if calibration:
        base_parts, other_parts = _same_queries(tables, baseline, _seed_parts)
        for method, parts in other_parts.items():
            for name in calibration:
                tested = name in parts[0] and name in base_parts[0]
                p_values[method][name] = (
                    bootstrap_p([p[name] for p in parts], [p[name] for p in base_parts]) if tested else np.nan
                )
    return p_values


def _same_queries(
    tables: Mapping[str, Sequence[pa.Table]],
    baseline: str,
    per_query: Callable[[Sequence[pa.Table], str], tuple[np.ndarray, T]],
) -> tuple[T, dict[str, T]]:
    """``per_query``'s values (it returns qids, values) of the baseline, and of every other method,
    which must have scored the same queries as the baseline."""
    base_qids, base = per_query(tables[baseline], baseline)
    methods = {}
    for method in (m for m in tables if m != baseline):
        qids, methods[method] = per_query(tables[method], method)
        if not np.array_equal(qids, base_qids):
            raise RankuqError(f"{method} and the baseline {baseline} scored different queries")
    return base, methods


def _seed_parts(
    tables: Sequence[pa.Table], method: str
) -> tuple[np.ndarray, list[dict[str, tuple[np.ndarray, np.ndarray]]]]:
    """Each seed's calibration errors and scoring rules split by query, on the same queries."""
    lists = [scored_lists(table, method).with_relevant() for table in tables]
    if any(not np.array_equal(lists[0].qids, other.qids) for other in lists[1:]):
        raise RankuqError(
            f"the seeds of {method} scored different queries; clear the run's predictions cache"
        )
    return lists[0].qids, [_tested_parts(one) for one in lists]


def _tested_parts(lists: ScoredLists) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``query_parts`` and the scoring rules' [Q, 1] Σ loss and [Q] #candidates (Σ loss ≥ 0, so
    ``bootstrap_p``'s |Σ gaps| / Σ mass is their mean); none for scores that are not probabilities."""
    if not lists.ranked.probabilistic:
        return {}
    rules = {name: (part.rows[:, :1], part.rows[:, 1]) for name, part in scoring_rule_parts(lists).items()}
    return query_parts(lists) | rules


def bootstrap_p(
    method: Sequence[tuple[np.ndarray, np.ndarray]],
    baseline: Sequence[tuple[np.ndarray, np.ndarray]],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> float:
    """Two-sided p-value of a paired bootstrap over queries for a calibration error.

    Each argument holds one (per-query bin gaps [Q, bins], per-query mass [Q]) per seed
    (``bench.metrics.ece.query_bin_gaps``). A resample draws Q queries with replacement
    (``numpy.random.default_rng(seed)``, the same queries for method and baseline: paired) and
    recomputes both errors on them (bins stay those of all the queries: ERCE's adaptive edges are
    not re-cut), each averaged over seeds; Δ* = method − baseline. The p-value
    is that of the percentile interval: 2·min(#{Δ* ≤ 0} + 1, #{Δ* ≥ 0} + 1) / (resamples + 1),
    capped at 1 (the +1 counts the observed sample, so p is never 0).
    """
    n_queries = method[0][1].size
    rng = np.random.default_rng(seed)
    step = max(1, _RESAMPLE_CELLS // n_queries)
    below = above = 0
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        counts = rng.multinomial(n_queries, np.full(n_queries, 1 / n_queries), size=size)
        delta = _resampled(counts, method) - _resampled(counts, baseline)
        below += int((delta <= 0).sum())
        above += int((delta >= 0).sum())
    return min(1.0, 2 * (min(below, above) + 1) / (resamples + 1))


def _resampled(counts: np.ndarray, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The error of each resample (rows of query counts), averaged over seeds."""
    return np.asarray(
        np.mean([np.abs(counts @ gaps).sum(axis=1) / (counts @ mass) for gaps, mass in parts], axis=0)
    )


def randomisation_p(a: np.ndarray, b: np.ndarray, resamples: int = PERMUTATIONS, seed: int = 0) -> float:
    """``randomisation_ps`` of one metric's per-query values ``a`` against ``b``."""
    return float(
        randomisation_ps(np.asarray(a, np.float64)[None] - np.asarray(b, np.float64), resamples, seed)[0]
    )


def randomisation_ps(
    differences: np.ndarray, resamples: int = PERMUTATIONS, seed: int = 0, block: int = _RESAMPLE_CELLS
) -> np.ndarray:
    """Two-sided p-values of Fisher's paired randomisation test (Smucker, Allan & Carterette, 2007),
    one per row of ``differences`` [metrics, queries] (a − b per query): under the null each query's
    two values swap with probability ½, which flips the sign of its difference.

    Every assignment when there are at most ``resamples`` of them (exact: p is the share at least as
    extreme); else ``resamples`` assignments, a bit per query from the raw stream of
    ``numpy.random.default_rng(seed)``, the same for every metric, and p counts the observed one too
    (never 0). Two-sided as ``scipy.stats.permutation_test``: 2·min(P(≤), P(≥)) with its tolerance
    of 100 ulps, capped at 1 (scipy itself took 45 s for 200 assignments of 300k queries). The
    assignments are drawn and summed ``block`` cells (assignments × queries) at a time: memory does
    not grow with the queries, and each assignment's sum is its own row's, so the p-values do not
    depend on ``block``.
    """
    differences = np.atleast_2d(np.asarray(differences, np.float64))
    n_queries = differences.shape[1]
    exact = n_queries < 64 and 1 << n_queries <= resamples
    total = 1 << n_queries if exact else resamples
    observed = differences.sum(axis=1)
    gamma = np.abs(100 * np.finfo(np.float64).eps * observed)
    below, above = np.zeros(len(differences)), np.zeros(len(differences))
    bits = np.random.default_rng(seed).bit_generator
    step = max(1, block // max(1, n_queries))
    for start in range(0, total, step):
        size = min(step, total - start)
        if exact:  # assignment i flips query j where bit j of i is set
            flips = (np.arange(start, start + size)[:, None] >> np.arange(n_queries)) & 1 == 1
        else:
            raw = bits.random_raw((size, -(-n_queries // 64))).view(np.uint8)
            flips = np.unpackbits(raw, axis=1, count=n_queries, bitorder="little").astype(bool)
        for row, difference in enumerate(differences):
            null = np.where(flips, -difference, difference).sum(axis=1)
            below[row] += np.count_nonzero(null <= observed[row] + gamma[row])
            above[row] += np.count_nonzero(null >= observed[row] - gamma[row])
    counted = 0 if exact else 1
    return np.minimum(1.0, 2 * (np.minimum(below, above) + counted) / (total + counted))
