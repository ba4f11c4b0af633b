"""Calibration: ECE with equal-width and adaptive bins (Penha & Hauff, 2021 §3.1, C = 10),
ERCE (Cohen et al., 2021
eq. 12), ECE as the number of non-relevant candidates grows (Penha & Hauff, 2021 Figure 2), reliability
diagrams.

Metric keys: ``ECE`` (Penha & Hauff, 2021's: relevant and non-relevant candidates balanced per query,
``bench.metrics.ece.balanced_weights``), ``ECE.all`` (every candidate pooled), ``ECE.adaptive``
(every candidate pooled, equal-mass bins), ``ERCE``, ``ECE.nonrel_<k>``, and the proper scoring
rules over every candidate, ``bench.metrics.scoring_rules``' (the leaderboard's columns): ``Brier``
(Brier, 1950: mean (p − y)²) and ``NLL`` (the mean negative log-likelihood −[y log p + (1 − y) log(1 − p)],
p clipped to [ε, 1 − ε], ε = float64's, as scikit-learn's ``log_loss``).

Parts (``bench.statistics.parts``, statistic ``calibration_error``, one row per query of the lists: its
Σ w·(confidence − outcome) per bin, then its Σ w): ``ECE``, ``ECE.all``, ``ERCE`` and every
``ECE.nonrel_<k>`` (queries outside k's subsample have zero gaps and zero mass, so the rows of every
k align by qid); ``Brier`` and ``NLL``, statistic ``ratio_of_means``: a query's [Σ loss,
#candidates]. The bins are those of all the rows, as the metric's, and stay fixed when the queries are
resampled: ERCE's equal-mass bins are those of all its pairs. ``ECE.adaptive`` has no parts (its
equal-mass bins are cut on all the candidate rows; a resample of the queries would cut them elsewhere).
"""

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
from scipy.special import expit

from rankuq.bench.metrics.ece import (
    balanced_weights,
    bin_sums,
    check_probabilities,
    expected_calibration_error,
    query_bin_gaps,
)
from rankuq.bench.metrics.scoring_rules import LOSSES
from rankuq.bench.plots import reliability_diagram
from rankuq.bench.probes.base import PROBES, Draw, ProbeResult, ScoredLists, as_lists, merge
from rankuq.bench.statistics.parts import QueryParts
from rankuq.errors import RankuqError

N_BINS = 10
NEGATIVES = (1, 2, 5, 9)  # #non-relevant per relevant candidate in the ECE sweep
_PAIR_CHUNK = 1 << 20  # pair draws per block when averaging over S draws (bounds memory)


def relevant_pairs(lists: ScoredLists) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices into the [Q, L] matrices of (relevant, non-relevant) candidates for every
    pair of a relevant and a non-relevant candidate of the same query, the pairs ERCE compares.

    Built by repetition (each relevant candidate once per non-relevant one of its query), not
    from a [Q, L, L] cube, so memory and time follow the number of pairs.
    """
    width = lists.scores.shape[1]
    relevant = np.flatnonzero(lists.relevant)
    negative = np.flatnonzero(lists.mask & ~lists.relevant)  # row-major: grouped by query
    counts = np.bincount(negative // width, minlength=lists.length.size)  # per query
    repeats = counts[relevant // width]  # pairs of each relevant candidate
    block_start = np.repeat(np.cumsum(repeats) - repeats, repeats)  # per pair: its block's start
    first_negative = np.repeat((np.cumsum(counts) - counts)[relevant // width], repeats)
    offset = np.arange(block_start.size) - block_start  # per pair: its rank within the block
    return np.repeat(relevant, repeats), negative[first_negative + offset]


def pair_probabilities(lists: ScoredLists) -> np.ndarray:
    """P(D_i > D_j) for each pair of ``relevant_pairs`` (i relevant, j not), one estimator for
    every ranker: the mean over the draws t of Cohen et al., 2021's pairwise softmax σ(z_i^t − z_j^t),
    draws paired by index (for an ensemble, the same member). z is the logit of a draw that is a
    probability (the 2-way head's logit: σ(z_i − z_j) = p_i(1−p_j) / (p_i(1−p_j) + p_j(1−p_i)),
    ½ when both p are 0 or both 1) and the raw score otherwise. With one draw (S = 1) this is
    σ(z_i − z_j) of prob_mean. A vote fraction over draws (share of t with s_i^t > s_j^t) would be
    near 0 or 1 for most pairs and make every stochastic ranker look over-confident.
    """
    i, j = relevant_pairs(lists)
    if lists.samples is None:
        scores = lists.scores.ravel()
        return _pairwise_softmax(scores[i], scores[j], lists.ranked.probabilistic)
    draws = lists.samples.reshape(-1, lists.n_samples)
    step = max(1, _PAIR_CHUNK // lists.n_samples)
    blocks = [slice(start, start + step) for start in range(0, i.size, step)]
    return np.concatenate(
        [
            _pairwise_softmax(
                draws[i[b]].astype(np.float64), draws[j[b]].astype(np.float64), lists.ranked.probabilistic
            ).mean(axis=1)
            for b in blocks
        ]
        or [np.zeros(0)]
    )


def _pairwise_softmax(p: np.ndarray, q: np.ndarray, probabilistic: bool) -> np.ndarray:
    """σ(z_p − z_q) elementwise, z the logit of a probability or the raw score."""
    if not probabilistic:
        return np.asarray(expit(p - q))
    above = p * (1 - q)
    total = q * (1 - p)
    total += above
    return np.asarray(np.divide(above, total, out=np.full_like(above, 0.5), where=total > 0))


def expected_ranking_calibration_error(
    lists: ScoredLists, n_bins: int = N_BINS
) -> tuple[float, np.ndarray, np.ndarray]:
    """ERCE (Cohen et al., 2021 eq. 12) = Σ_m |B_m|/n · |mean_{B_m} P(D_i > D_j) − mean_{B_m} 1(D_i > D_j)|.

    Over the n pairs of a relevant and a non-relevant candidate of one query, each written in
    the order the model prefers, as ECE (eq. 11) uses the predicted class: the confidence
    P(D_i > D_j) = max(P, 1 − P) with P from ``pair_probabilities``, and 1(D_i > D_j) = 1 when
    that order ranks the relevant candidate first (it increases MAP), 0 when it does not, ½ when
    P = ½ (no preference). Bins are adaptive (equal mass, Cohen et al., 2021 §4.5). Returns ERCE and the
    pairs' (confidences, outcomes) for the reliability diagram.
    """
    p = pair_probabilities(lists)
    if p.size == 0:
        raise RankuqError(
            f"{lists.ranked.source}: no query has both a relevant and a non-relevant candidate, "
            "so ERCE has no pair to compare"
        )
    confidence = np.maximum(p, np.subtract(1, p))
    outcome = (p > 0.5).astype(np.float64)
    outcome[p == 0.5] = 0.5
    return expected_calibration_error(confidence, outcome, n_bins, adaptive=True), confidence, outcome


def query_parts(lists: ScoredLists, n_bins: int = N_BINS) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``ECE``, ``ECE.all`` (for probabilities) and ``ERCE`` split by query
    (``bench.metrics.ece.query_bin_gaps``: per query and bin Σ (confidence − outcome), per query
    the mass), so a paired bootstrap over queries recomputes each in one matrix product. ERCE's
    adaptive bins are those of all the pairs."""
    _, confidence, outcome = expected_ranking_calibration_error(lists, n_bins)
    return _split_by_query(lists, confidence, outcome, n_bins)


def _split_by_query(
    lists: ScoredLists, confidence: np.ndarray, outcome: np.ndarray, n_bins: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``query_parts`` from ERCE's pairs (``expected_ranking_calibration_error``'s confidences and
    outcomes), so the probe does not draw them twice."""
    n_queries = lists.length.size
    pair_query = relevant_pairs(lists)[0] // lists.scores.shape[1]
    parts = {"ERCE": query_bin_gaps(confidence, outcome, pair_query, n_queries, n_bins, adaptive=True)}
    if lists.ranked.probabilistic:
        check_probabilities(lists.ranked)
        scores, relevant = lists.ranked.scores, lists.ranked.row_labels > 0
        query = lists.ranked.row_query
        weights = balanced_weights(query, relevant)
        parts["ECE"] = query_bin_gaps(scores, relevant, query, n_queries, n_bins, weights=weights)
        parts["ECE.all"] = query_bin_gaps(scores, relevant, query, n_queries, n_bins)
    return parts


def scoring_rule_parts(lists: ScoredLists) -> dict[str, QueryParts]:
    """``Brier`` and ``NLL`` of every candidate's P(relevant) split by query: rows [Σ loss, #candidates]
    of statistic ``ratio_of_means``, whose value over all rows is the mean over every candidate."""
    losses = {name: loss(lists.ranked) for name, loss in LOSSES.items()}  # the leaderboard's estimator
    query, n_queries = lists.ranked.row_query, lists.length.size
    count = np.bincount(query, minlength=n_queries).astype(np.float64)
    return {
        name: QueryParts(
            np.asarray(lists.qids),
            np.column_stack([np.bincount(query, loss, minlength=n_queries), count]),
            "ratio_of_means",
        )
        for name, loss in losses.items()
    }


def calibration_parts(qids: np.ndarray, gaps: np.ndarray, mass: np.ndarray) -> QueryParts:
    """``query_bin_gaps``' ([Q, bins] gaps, [Q] mass) as parts: rows [gaps per bin …, mass],
    statistic ``calibration_error``."""
    return QueryParts(np.asarray(qids), np.column_stack([gaps, mass]).astype(np.float64), "calibration_error")


def subsample_negatives(
    lists: ScoredLists, k: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Candidate lists of 1 relevant and k non-relevant candidates (Penha & Hauff, 2021 Figure 2).

    Of the queries with exactly one relevant candidate and at least k non-relevant ones, keep the
    relevant candidate and the k non-relevant ones with the smallest keys drawn by
    ``numpy.random.default_rng(seed).random((Q, L))``; the subsample for k contains that for any
    smaller k. Returns their (probabilities, relevance), the number of queries and the query
    (row index of ``lists``) of each kept candidate.
    """
    relevant, negative = lists.relevant, lists.mask & ~lists.relevant
    most = most_negatives(lists)
    if k > most:
        raise RankuqError(
            f"{lists.ranked.source}: no query has exactly one relevant and at least {k} non-relevant "
            f"candidates (at most {most}); choose a smaller #non-relevant"
        )
    keys = np.where(negative, np.random.default_rng(seed).random(negative.shape), np.inf)
    order = np.argsort(np.argsort(keys, axis=1, kind="stable"), axis=1, kind="stable")
    queries = (relevant.sum(axis=1) == 1) & (negative.sum(axis=1) >= k)
    kept = queries[:, None] & (relevant | (negative & (order < k)))
    return lists.scores[kept], relevant[kept].astype(np.float64), int(queries.sum()), np.nonzero(kept)[0]


def most_negatives(lists: ScoredLists) -> int:
    """The most non-relevant candidates of a query with exactly one relevant one (0 if none)."""
    single = lists.relevant.sum(axis=1) == 1
    return int((lists.mask & ~lists.relevant)[single].sum(axis=1).max(initial=0))


def ece_by_negatives(
    predictions: pa.Table | ScoredLists, ks: Sequence[int] = NEGATIVES, seed: int = 0, n_bins: int = N_BINS
) -> dict[int, float]:
    """ECE (equal-width bins) of ``subsample_negatives`` for each k: calibration as the number of
    non-relevant candidates per relevant one grows."""
    lists = as_lists(predictions)
    check_probabilities(lists.ranked)
    return {k: expected_calibration_error(*subsample_negatives(lists, k, seed)[:2], n_bins) for k in ks}


@PROBES.register
def probe(
    predictions: pa.Table | ScoredLists,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    n_bins: int = N_BINS,
    negatives: Sequence[int] = NEGATIVES,
) -> ProbeResult:
    """ECE (balanced, as ``bench.metrics``' ECE), ECE.all and adaptive ECE (every candidate row
    pooled), ERCE and the #non-relevant sweep over every query (only queries with a relevant and
    a non-relevant candidate give ERCE pairs and balanced ECE weight). ``seed`` draws the sweep's
    non-relevant candidates; ``dev`` is unused (nothing is fitted). A table flagged
    non-probabilistic (BM25, a TREC run with raw scores) gets ERCE only: its ECE is undefined."""
    lists = as_lists(predictions)
    if lists.ranked.probabilistic:
        check_probabilities(lists.ranked)  # a score outside [0, 1] is an error, not a skip
    erce, pair_p, pair_outcome = expected_ranking_calibration_error(lists, n_bins)
    parts = {
        name: calibration_parts(lists.qids, *split)
        for name, split in _split_by_query(lists, pair_p, pair_outcome, n_bins).items()
    }
    pairs = ProbeResult(
        {"ERCE": erce},
        curves={"ERCE": _curve(pair_p, pair_outcome, n_bins, adaptive=True)},
        # raw scores (BM25's) on a probability axis say nothing: their diagram is left out
        plots={"reliability_ERCE": _diagram({"pairs": (pair_p, pair_outcome)}, n_bins, True, "ERCE")}
        if lists.ranked.probabilistic
        else {},
        parts={"ERCE": parts["ERCE"]},
    )
    if not lists.ranked.probabilistic:
        note = (
            f"{lists.ranked.source}: scores are not probabilities; ECE and its #non-relevant sweep left out"
        )
        return merge([pairs, ProbeResult({}, notes=(note,))])
    scores, relevant = lists.ranked.scores, (lists.ranked.row_labels > 0).astype(np.float64)
    # ERCE above has already refused lists where no query has both kinds: some weight is > 0
    weights = balanced_weights(lists.ranked.row_query, relevant > 0)
    rows = {"balanced (ECE)": (scores, relevant, weights), "all candidates (ECE.all)": (scores, relevant)}
    candidates = ProbeResult(
        {
            "ECE": expected_calibration_error(scores, relevant, n_bins, weights=weights),
            "ECE.all": expected_calibration_error(scores, relevant, n_bins),
            "ECE.adaptive": expected_calibration_error(scores, relevant, n_bins, adaptive=True),
        },
        curves={
            "ECE": _curve(scores, relevant, n_bins, adaptive=False, weights=weights),
            "ECE.all": _curve(scores, relevant, n_bins, adaptive=False),
            "ECE.adaptive": _curve(scores, relevant, n_bins, adaptive=True),
        },
        plots={
            "reliability": _diagram(rows, n_bins, False, "equal-width bins"),
            "reliability_adaptive": _diagram(
                {"all candidates": (scores, relevant)}, n_bins, True, "equal-mass bins"
            ),
        },
        # no parts for ECE.adaptive: its equal-mass bins are cut on all the rows, which a resample of
        # the queries would cut elsewhere
        parts={name: parts[name] for name in ("ECE", "ECE.all")},
    )
    scoring = scoring_rule_parts(lists)
    candidates = merge(
        [candidates, ProbeResult({name: part.value() for name, part in scoring.items()}, parts=scoring)]
    )
    return merge([pairs, candidates, _negative_sweep(lists, negatives, seed, n_bins)])


def _negative_sweep(lists: ScoredLists, negatives: Sequence[int], seed: int, n_bins: int) -> ProbeResult:
    """``ECE.nonrel_<k>`` for each k some query can fill, with its parts (a row for every query of
    ``lists``, zero outside k's subsample); the others are noted."""
    most = most_negatives(lists)
    feasible = [k for k in negatives if k <= most]
    notes: tuple[str, ...] = ()
    if len(feasible) < len(negatives):
        notes = (
            f"ECE by #non-relevant: k = {[k for k in negatives if k > most]} left out; queries with "
            f"one relevant candidate have at most {most} non-relevant ones",
        )
    if not feasible:
        return ProbeResult({}, notes=notes)
    samples = {k: subsample_negatives(lists, k, seed) for k in feasible}
    values = {k: expected_calibration_error(p, r, n_bins) for k, (p, r, *_) in samples.items()}
    lines = {f"#non-rel = {k}": (p, r) for k, (p, r, *_) in samples.items()}
    n_queries = lists.length.size
    parts = {
        f"ECE.nonrel_{k}": calibration_parts(lists.qids, *query_bin_gaps(p, r, query, n_queries, n_bins))
        for k, (p, r, _, query) in samples.items()
    }
    return ProbeResult(
        {f"ECE.nonrel_{k}": value for k, value in values.items()},
        curves={
            "ECE.nonrel": {
                "k": np.array(feasible),
                "ECE": np.array(list(values.values())),
                "queries": np.array([n for _, _, n, _ in samples.values()]),
            }
        },
        plots={"reliability_by_nonrel": _diagram(lines, n_bins, False, "1 relevant, k non-relevant")},
        notes=notes,
        parts=parts,
    )


def _curve(
    scores: np.ndarray, outcomes: np.ndarray, n_bins: int, adaptive: bool, weights: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Reliability points per non-empty bin: mean score, fraction of positive outcomes, count
    (each weighted by ``weights`` when given)."""
    counts, score_sums, outcome_sums = bin_sums(scores, outcomes, n_bins, adaptive, weights)
    kept = counts > 0
    return {
        "confidence": score_sums[kept] / counts[kept],
        "accuracy": outcome_sums[kept] / counts[kept],
        "count": counts[kept],
    }


def _diagram(curves: Mapping[str, tuple[np.ndarray, ...]], n_bins: int, adaptive: bool, title: str) -> Draw:
    return lambda path, subject: reliability_diagram(curves, path, n_bins, adaptive, title, subject)
