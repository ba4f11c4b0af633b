"""The abstention protocol (``bench.probes.abstention``) shared by the probe and its studies
(``bench.probes.abstention_studies``): the performance–abstention curves at the rates of RATES, their
areas and nAUC against the oracle and random abstention, the protocol's per-query inputs
(``Instances``, ``usable``) and a confidence function assessed on a (reference, test) part
(``assess_confidence``).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeGuard, cast

import numpy as np

from rankuq.bench.probes.base import ScoredLists
from rankuq.bench.probes.confidence import (
    DATA_DRIVEN,
    K,
    NotFittable,
    fit_confidence,
    free_confidence,
    sorted_scores,
)
from rankuq.bench.statistics.parts import BatchStatistic, QueryParts, statistic
from rankuq.errors import RankuqError

RATES = tuple(i / 10 for i in range(9))
_STEPS = np.diff(RATES)  # the trapezoids' widths


def abstained(n_queries: int) -> np.ndarray:
    """⌊r·N⌋ for each rate of RATES, in integers (i·N // 10), so 0.3·10 is exactly 3."""
    return np.arange(len(RATES)) * n_queries // 10


# Every function below works along the last axis: on one set of queries (N,) or on a stack of them
# (…, N), the bootstrap's resamples, with the same operations, so a stack's values are bit for bit
# those of its rows one at a time.


def kept_means(ordered: np.ndarray) -> np.ndarray:
    """P(r) for each rate of RATES: the mean of ``ordered`` (metric values, first abstained
    first) without its first ⌊r·N⌋ values. Only which values precede each cut matters, so
    ``ordered`` may be partitioned at the cuts rather than sorted."""
    n = ordered.shape[-1]
    cuts = abstained(n)
    edges = np.unique(np.append(cuts, n))  # 0 = e_0 < e_1 < … < N
    below = np.cumsum(np.add.reduceat(ordered, edges[:-1], axis=-1), axis=-1)
    prefix = np.concatenate([np.zeros((*ordered.shape[:-1], 1)), below], axis=-1)  # Σ below each edge
    return np.asarray((prefix[..., -1:] - prefix[..., np.searchsorted(edges, cuts)]) / (n - cuts))


def abstention_order(confidence: np.ndarray) -> np.ndarray:
    """Query indices, lowest confidence first, ties in query order (queries are sorted by qid,
    so lower qid first), partitioned at the cuts of every rate (enough for ``kept_means``)."""
    # complex numbers order by real part, then imaginary: (confidence, query index)
    return _partitioned(confidence + 1j * np.arange(confidence.shape[-1]))


def performance_curve(metric: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """P(r) abstaining on the lowest confidences first (``abstention_order``)."""
    return kept_means(np.take_along_axis(metric, abstention_order(confidence), axis=-1))


def oracle_curve(metric: np.ndarray) -> np.ndarray:
    """P(r) of the oracle, which abstains on the lowest metric values first."""
    return kept_means(np.take_along_axis(metric, _partitioned(metric), axis=-1))


def _partitioned(keys: np.ndarray) -> np.ndarray:
    """Indices ordering ``keys`` so that the ⌊r·N⌋ smallest come first for every rate: a
    partition at the cuts, O(N), instead of a full sort."""
    n = keys.shape[-1]
    cuts = abstained(n)
    cuts = np.unique(cuts[(cuts > 0) & (cuts < n)])
    return np.argpartition(keys, cuts, axis=-1) if cuts.size else np.broadcast_to(np.arange(n), keys.shape)


def area(curve: np.ndarray) -> np.ndarray:
    """Area under a performance–abstention curve, trapezoid rule over RATES. The eight trapezoids
    are added pairwise in a fixed order (numpy's own order for one curve), the same for a stack of
    curves, whose sum numpy would take in another order."""
    t = _STEPS * (curve[..., 1:] + curve[..., :-1]) / 2.0
    total = ((t[..., 0] + t[..., 1]) + (t[..., 2] + t[..., 3])) + (
        (t[..., 4] + t[..., 5]) + (t[..., 6] + t[..., 7])
    )
    return cast(np.ndarray, total)  # a numpy scalar for one curve


@dataclass(frozen=True)
class NormalisedAUC:
    """nAUC and its terms; ``value`` is NaN when the oracle equals random (no query is better
    than another, e.g. a perfect ranker), where nAUC is undefined."""

    value: float
    auc: float
    oracle: float
    random: float


@dataclass(frozen=True)
class Bounds:
    """The oracle's and random abstention's curves over a set of queries' metric values."""

    oracle: np.ndarray
    random: np.ndarray

    @classmethod
    def of(cls, metric: np.ndarray) -> "Bounds":
        """Random abstention keeps, in expectation, the mean at every rate."""
        means = metric.mean(axis=-1)[..., None]
        return cls(oracle_curve(metric), np.broadcast_to(means, (*metric.shape[:-1], len(RATES))))

    def normalised(self, curve: np.ndarray) -> np.ndarray:
        """nAUC of ``curve`` (one or a stack, as the bounds are)."""
        return _normalised(area(curve), area(self.oracle), area(self.random))

    def normalise(self, curve: np.ndarray) -> NormalisedAUC:
        """nAUC of one set of queries, with its terms."""
        auc, oracle, random = area(curve), area(self.oracle), area(self.random)
        return NormalisedAUC(
            float(_normalised(auc, oracle, random)), float(auc), float(oracle), float(random)
        )


def _normalised(auc: np.ndarray, oracle: np.ndarray, random: np.ndarray) -> np.ndarray:
    """nAUC = (AUC − AUC_random) / (AUC_oracle − AUC_random) (Gisserot-Boukhlef et al., 2024 eq. 8);
    NaN where the oracle equals random."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(oracle > random, (auc - random) / (oracle - random), np.nan)


def normalised_auc(metric: np.ndarray, confidence: np.ndarray) -> NormalisedAUC:
    """nAUC of abstaining by ``confidence`` on queries with the given metric values."""
    return Bounds.of(metric).normalise(performance_curve(metric, confidence))


def _normalised_auc(rows: np.ndarray) -> np.ndarray:
    """Statistic ``normalised_auc`` of a stack of resamples: rows (…, N, [metric value, confidence]) →
    nAUC (…) (NaN where the oracle equals random), ties abstained in row order."""
    metric, confidence = rows[..., 0], rows[..., 1]
    return Bounds.of(metric).normalised(performance_curve(metric, confidence))


statistic(BatchStatistic(_normalised_auc, "normalised_auc"))


def metric_parts(qids: np.ndarray, name: str, *columns: np.ndarray | float) -> QueryParts:
    """Parts of one metric: a row per query of the given columns (a number fills its column)."""
    rows = np.column_stack([np.broadcast_to(np.asarray(c, dtype=np.float64), qids.shape) for c in columns])
    return QueryParts(qids, rows, name)


@dataclass(frozen=True)
class Instances:
    """The protocol's per-query inputs: metric values, the confidences that need no fitting and
    (when a learner is fitted) the sorted scores it reads."""

    metric: dict[str, np.ndarray]
    free: dict[str, np.ndarray]
    features: np.ndarray | None

    def take(self, index: np.ndarray) -> "Instances":
        return Instances(
            {m: v[index] for m, v in self.metric.items()},
            {u: v[index] for u, v in self.free.items()},
            None if self.features is None else self.features[index],
        )


def instances(lists: ScoredLists, names: Sequence[str], confidences: Sequence[str], k: int = K) -> Instances:
    """``Instances`` of every query of ``lists``."""
    fitted = any(u in DATA_DRIVEN for u in confidences)
    return Instances(
        lists.per_query(names),
        {u: free_confidence(lists, u) for u in confidences if u not in DATA_DRIVEN},
        sorted_scores(lists, k) if fitted else None,
    )


def usable(lists: ScoredLists) -> tuple[ScoredLists, tuple[str, ...]]:
    """The queries the protocol scores: a relevant candidate and at least two candidates."""
    relevant, multiple = lists.ranked.n_relevant > 0, lists.length >= 2
    kept = relevant & multiple
    if kept.sum() < 2:
        raise RankuqError(
            f"{lists.ranked.source}: abstention needs 2 or more queries with a relevant candidate "
            f"and 2 or more candidates; the table has {kept.sum()}"
        )
    notes = tuple(
        f"abstention: {n} {what} left out"
        for n, what in (
            ((~relevant).sum(), "queries without a relevant candidate"),
            ((relevant & ~multiple).sum(), "one-candidate queries"),
        )
        if n
    )
    return (lists if kept.all() else lists.select(kept)), notes


class Assessed(NamedTuple):
    """One confidence function on one part: its reference and test values and the test curve."""

    reference: np.ndarray | None
    test: np.ndarray
    curve: np.ndarray


def assess_confidence(
    u: str, reference: Instances | None, test: Instances, names: Sequence[str], seed: int
) -> dict[str, Assessed | NotFittable]:
    """Confidence ``u`` on a (reference, test) part, per metric: a data-driven one is fitted on
    the reference set to predict that metric (``seed`` seeds the learner); one without fitting
    is ordered once for every metric."""
    if u not in DATA_DRIVEN:
        order = abstention_order(test.free[u])
        mine = None if reference is None else reference.free[u]
        return {m: Assessed(mine, test.free[u], kept_means(test.metric[m][order])) for m in names}
    # probe() fits data-driven confidences only on parts with a reference set, and gives every
    # Instances its sorted scores when one is data-driven
    assert reference is not None and reference.features is not None and test.features is not None
    out: dict[str, Assessed | NotFittable] = {}
    for m in names:
        try:
            fitted = fit_confidence(u, reference.features, reference.metric[m], seed)
        except NotFittable as reason:
            out[m] = reason
            continue
        values = fitted(test.features)
        out[m] = Assessed(fitted(reference.features), values, performance_curve(test.metric[m], values))
    return out


Part = tuple[Instances | None, Instances, int]  # (reference, test, seed of the fits)


def all_assessed(found: list[Assessed | NotFittable]) -> TypeGuard[list[Assessed]]:
    return not any(isinstance(a, NotFittable) for a in found)
