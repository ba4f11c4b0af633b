"""Cutoff prediction (Cohen et al., 2021 §4.5.1, §5.4): where to cut a ranked list to maximise F1.

For a query's top-k list, cutting after c candidates scores F1(c) = 2·rel@c / (c + |relevant|)
(|relevant|: the query's judged relevant candidates; cutting past a short list keeps it whole).
The oracle cuts at argmax_c F1(c). The learned cutoff replaces the paper's Choppy transformer
by a simpler learner: a random forest regressor (100 trees) predicting every F1(c) from the
list's per-position features, cutting where the predicted F1 is highest (smallest c on ties),
5-fold cross-validated. Features per position: the score alone ("scores", any ranker) and, for
a stochastic ranker, <mean, std, skew, entropy> of the draws ("uncertainty").

Reported as F1 of the learned cutoff over F1 of the oracle, both averaged over queries:
``cutoff.F1_ratio.scores``, ``cutoff.F1_ratio.uncertainty``, ``cutoff.F1.oracle`` and
``cutoff.p_value`` (paired t-test per query, uncertainty against scores).

Parts (``bench.statistics.parts``, one row per query with a relevant candidate, the probe's queries):
``cutoff.F1_ratio.<space>``, rows [the learned cutoff's F1, the oracle's F1], statistic
``ratio_of_means``; ``cutoff.F1.oracle``, rows [the oracle's F1], statistic ``mean``. The learned
cutoffs are those of the cross-validation over all the queries (a resample reuses them, it does not
refit the forests).
"""

import numpy as np
import pyarrow as pa

from rankuq.bench.probes.base import PROBES, ProbeResult, ScoredLists, as_lists, top_k
from rankuq.bench.probes.confidence import K
from rankuq.bench.statistics.paired import paired_t
from rankuq.bench.statistics.parts import QueryParts, per_query
from rankuq.errors import RankuqError

FOLDS = 5
ENTROPY_BINS = 10


def f1_at_cutoffs(lists: ScoredLists, k: int = K) -> np.ndarray:
    """[Q, k]: F1 when cutting after c = 1..k candidates, 2·rel@c / (c + |relevant|), where a
    cut past the end of a short list keeps the list (c = its length)."""
    kept = np.minimum(np.arange(1, k + 1), lists.length[:, None])
    relevant = lists.relevant[:, :k]
    hits = np.take_along_axis(np.cumsum(relevant, axis=1), np.minimum(kept, relevant.shape[1]) - 1, axis=1)
    return np.asarray(2 * hits / (kept + lists.ranked.n_relevant[:, None]))


def draw_features(lists: ScoredLists) -> np.ndarray:
    """[Q, L, 4]: mean (prob_mean), std, skewness and entropy of each candidate's draws.

    std is the population one; skewness g1 = m3 / m2^1.5 (0 when the draws are equal); entropy
    (nats) of the draws' histogram over ENTROPY_BINS equal-width bins spanning their own range
    (0 when the draws are equal).
    """
    assert lists.samples is not None, "draw features need draws (S > 1)"  # as the probe checks first
    draws = lists.samples.astype(np.float64)
    centred = draws - draws.mean(axis=2, keepdims=True)
    m2, m3 = (centred**2).mean(axis=2), (centred**3).mean(axis=2)
    skew = np.divide(m3, m2**1.5, out=np.zeros_like(m2), where=m2 > 0)
    return np.stack([lists.scores, np.sqrt(m2), skew, _histogram_entropy(draws)], axis=2)


def _histogram_entropy(draws: np.ndarray) -> np.ndarray:
    low, span = draws.min(axis=2, keepdims=True), np.ptp(draws, axis=2, keepdims=True)
    position = np.divide(draws - low, span, out=np.zeros_like(draws), where=span > 0)
    bins = np.minimum((ENTROPY_BINS * position).astype(np.int64), ENTROPY_BINS - 1)
    cells = np.arange(bins.shape[0] * bins.shape[1]).reshape(bins.shape[:2])[..., None]
    counts = np.bincount((cells * ENTROPY_BINS + bins).ravel(), minlength=cells.size * ENTROPY_BINS)
    share = counts.reshape(*bins.shape[:2], ENTROPY_BINS) / draws.shape[2]
    return np.asarray(-np.sum(share * np.log(np.where(share > 0, share, 1)), axis=2))


def learned_cutoffs(features: np.ndarray, f1: np.ndarray, seed: int = 0) -> np.ndarray:
    """Cross-validated cutoff (0-based index) per query: a random forest regressor fitted on the
    other folds (5, or one per query for fewer than 5 queries; 2 or more queries) predicts the F1 of
    each cutoff; the highest prediction wins (first on ties)."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.model_selection import KFold

    cut = np.zeros(len(features), dtype=int)
    folds = min(FOLDS, len(features))  # a handful of queries (a small BEIR folder): leave one out
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(features):
        forest = RandomForestRegressor(n_estimators=100, random_state=seed, n_jobs=1)
        predicted = forest.fit(features[train], f1[train]).predict(features[test])
        cut[test] = predicted.reshape(len(test), -1).argmax(axis=1)
    return cut


@PROBES.register
def probe(
    predictions: pa.Table | ScoredLists,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    k: int = K,
) -> ProbeResult:
    """Learned-over-oracle F1 of each feature set over the queries with a relevant candidate
    (F1 is 0 at every cutoff without one); ``dev`` is unused (cross-validation)."""
    lists = as_lists(predictions).with_relevant()
    if lists.length.size < 2:
        raise RankuqError(
            f"{lists.ranked.source}: the cutoff probe cross-validates its learner over the queries with a "
            f"relevant candidate, which needs 2 or more (the table has {lists.length.size}); judge more "
            "queries, or leave cutoff out of eval.probes"
        )
    f1 = f1_at_cutoffs(lists, k)
    oracle = f1.max(axis=1)
    spaces = {"scores": top_k(lists.scores, lists.length, k)}
    if lists.samples is not None:
        spaces["uncertainty"] = top_k(draw_features(lists), lists.length, k).reshape(len(f1), -1)
    achieved = {
        space: np.take_along_axis(f1, learned_cutoffs(x, f1, seed)[:, None], axis=1)[:, 0]
        for space, x in spaces.items()
    }
    values = {f"cutoff.F1_ratio.{space}": float(a.mean() / oracle.mean()) for space, a in achieved.items()}
    values["cutoff.F1.oracle"] = float(oracle.mean())
    parts = {
        f"cutoff.F1_ratio.{space}": QueryParts(lists.qids, np.column_stack([a, oracle]), "ratio_of_means")
        for space, a in achieved.items()
    }
    parts["cutoff.F1.oracle"] = per_query(lists.qids, oracle)
    notes: tuple[str, ...] = ()
    if "uncertainty" in achieved:
        values["cutoff.p_value"] = paired_t(achieved["uncertainty"], achieved["scores"]).p
    else:
        notes = ("cutoff: one draw per candidate (S = 1), so only the scores feature set is scored",)
    return ProbeResult(values, notes=notes, parts=parts)
