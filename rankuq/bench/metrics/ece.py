"""Expected calibration error over candidate rows (Penha & Hauff, 2021 §3.1; Naeini et al., 2015).

Two metrics: ``ECE`` is Penha & Hauff, 2021's, computed "using a balanced number of relevant and non
relevant documents" (Table 1 caption); ``ECE.all`` pools every candidate row (the test lists'
natural prior, about 1 relevant in 8 on WikiQA), which a base-rate shift dominates.
"""

import numpy as np

from rankuq.bench.metrics.base import family
from rankuq.bench.metrics.matrix import RankedLists
from rankuq.errors import RankuqError


def bin_index(values: np.ndarray, n_bins: int = 10, adaptive: bool = False) -> np.ndarray:
    """The bin of each value: equal-width bins of [0, 1], or equal-mass (adaptive) bins.

    Equal width: bin b holds b/n_bins <= value < (b+1)/n_bins, the last bin also 1.0 (edges are
    the doubles nearest b/n_bins, so a value written 0.1 lands in bin 1).
    Adaptive (Cohen et al., 2021 §4.5): edge b is the value of rank ⌊b·n/n_bins⌋ (0-based, ascending) and
    bin b holds edge_b <= value < edge_{b+1}; without ties every bin holds ⌊(b+1)·n/C⌋ − ⌊b·n/C⌋
    values, and equal values never straddle two bins (a tied block joins the higher bin).
    """
    if adaptive:
        return _equal_mass_bins(values, np.arange(1, n_bins) * values.size // n_bins)
    edges = np.arange(1, n_bins) / n_bins
    # bin = the number of edges <= value; with few edges, one comparison pass per edge is
    # several times faster than a binary search per value
    if n_bins > 16:
        return np.searchsorted(edges, values, side="right")
    bins = np.zeros(values.shape, dtype=np.uint8)
    for edge in edges:
        bins += values >= edge
    return bins


_BUCKETS = 4096


def _equal_mass_bins(values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The number of edges <= each value, the edges being the values of the given ranks.

    Same result as ``searchsorted(partition(values, ranks)[ranks], values, "right")``, in fewer
    passes over large inputs: a histogram over _BUCKETS equal-width buckets (bucket order is value
    order) finds the bucket of each edge; only the values of those buckets are partitioned, for
    the edges, and searched, for their bins; every other value's bin is its bucket's.
    """
    low, high = values.min(), values.max()
    # one tied block, or a spread too small to scale into buckets: the plain way
    if not high - low > _BUCKETS / np.finfo(np.float64).max:
        return np.searchsorted(np.partition(values, ranks)[ranks], values, side="right")
    bucket = np.minimum(((values - low) * (_BUCKETS / (high - low))).astype(np.intp), _BUCKETS - 1)
    counts = np.bincount(bucket, minlength=_BUCKETS)
    cumulative = np.cumsum(counts)
    edge_bucket = np.searchsorted(cumulative, ranks, side="right")  # holds the rank-th value
    chosen = np.zeros(_BUCKETS, dtype=bool)
    chosen[edge_bucket] = True
    inside = np.flatnonzero(chosen[bucket])
    subset = values[inside]  # the target buckets' values, in table order
    # the rank-th value's position in the sorted subset: its rank within its bucket, plus the
    # subset's values in lower target buckets
    kept = np.where(chosen, counts, 0)
    positions = ranks - (cumulative - counts)[edge_bucket] + (np.cumsum(kept) - kept)[edge_bucket]
    edges = np.partition(subset, positions)[positions]
    bins = np.searchsorted(edge_bucket, np.arange(_BUCKETS))[bucket]  # edges of lower buckets
    bins[inside] = np.searchsorted(edges, subset, side="right")
    return np.asarray(bins)


def bin_sums(
    scores: np.ndarray,
    outcomes: np.ndarray,
    n_bins: int = 10,
    adaptive: bool = False,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per bin of ``bin_index``: the count, Σ score and Σ outcome, each row counted with its
    weight when ``weights`` are given (a reliability diagram's points are Σ score / count against
    Σ outcome / count)."""
    bins = bin_index(scores, n_bins, adaptive)
    if weights is None:
        return (
            np.bincount(bins, minlength=n_bins),
            np.bincount(bins, weights=scores, minlength=n_bins),
            np.bincount(bins, weights=outcomes, minlength=n_bins),
        )
    return (
        np.bincount(bins, weights=weights, minlength=n_bins),
        np.bincount(bins, weights=scores * weights, minlength=n_bins),
        np.bincount(bins, weights=outcomes * weights, minlength=n_bins),
    )


def expected_calibration_error(
    scores: np.ndarray,
    outcomes: np.ndarray,
    n_bins: int = 10,
    adaptive: bool = False,
    weights: np.ndarray | None = None,
) -> float:
    """ECE = Σ_b |B_b|/n · |avg(B_b) − rel(B_b)/|B_b||, over the bins of ``bin_index``.

    ``outcomes`` is 1 for a relevant candidate (or a correctly ordered pair, for ERCE), else 0.
    Each bin term equals |Σ_B score − Σ_B outcome| / n; unlike Penha & Hauff, 2021's public code, the sum is
    not divided by the number of bins again. With ``weights`` every sum and count is weighted
    (|B_b| = Σ_B w, n = Σ w); adaptive bins stay equal in count, not in weight.
    """
    gaps = scores - outcomes if weights is None else (scores - outcomes) * weights
    total = scores.size if weights is None else weights.sum()
    per_bin = np.bincount(bin_index(scores, n_bins, adaptive), weights=gaps, minlength=n_bins)
    return float(np.abs(per_bin).sum() / total)


def query_bin_gaps(
    scores: np.ndarray,
    outcomes: np.ndarray,
    query: np.ndarray,
    n_queries: int,
    n_bins: int = 10,
    adaptive: bool = False,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """ECE split by query: [Q, n_bins] Σ w·(score − outcome) of each query's rows per bin, and
    [Q] Σ w. With query multiplicities c (a bootstrap resample), ECE = Σ_b |c·gaps_b| / c·mass;
    with c = 1 it is ``expected_calibration_error``. Bins are fixed by all the rows."""
    w = np.ones(scores.size) if weights is None else weights
    cell = query * n_bins + bin_index(scores, n_bins, adaptive)
    gaps = np.bincount(cell, weights=(scores - outcomes) * w, minlength=n_queries * n_bins)
    return gaps.reshape(n_queries, n_bins), np.bincount(query, weights=w, minlength=n_queries)


def balanced_weights(row_query: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Row weights that balance relevant and non-relevant candidates within each query: 1 for a
    relevant candidate, #rel_q / #nonrel_q for a non-relevant one of query q, 0 for every row of
    a query that lacks either kind (it has no pair to balance).

    Paper 000 pairs each relevant candidate with one non-relevant candidate of its query. Drawing
    that candidate uniformly picks each non-relevant one #rel_q / #nonrel_q times in expectation,
    so these weights give every bin the expected count, Σ score and Σ relevant of such a draw:
    the same balanced ECE without the noise of one draw, and with no seed.
    """
    n_queries = int(row_query.max(initial=-1)) + 1
    n_relevant = np.bincount(row_query, weights=relevant, minlength=n_queries)
    n_negative = np.bincount(row_query, weights=~relevant, minlength=n_queries)
    ratio = np.divide(n_relevant, n_negative, out=np.zeros(n_queries), where=n_negative > 0)
    return np.asarray(np.where(relevant, (n_negative > 0)[row_query].astype(np.float64), ratio[row_query]))


def check_probabilities(lists: RankedLists, metric: str = "ECE") -> None:
    """Refuse scores that are not probabilities: ``metric`` (ECE of either binning, a scoring rule)
    is undefined for them."""
    if not lists.probabilistic:
        raise RankuqError(
            f"{lists.source}: scores are not probabilities (the table is flagged "
            f"non-probabilistic), so {metric} is undefined; drop {metric} or calibrate the scores first"
        )
    outside = np.flatnonzero((lists.scores < 0) | (lists.scores > 1))
    if outside.size:
        i = int(outside[0])
        raise RankuqError(
            f"{lists.source}: row {lists.rows[i]} (qid {lists.qids[lists.row_query[i]]}): score "
            f"{lists.scores[i]} is outside [0, 1]; scores are not probabilities, so {metric} is "
            f"undefined; drop {metric} or calibrate the scores first"
        )


@family("ECE", cutoff="none", pooled=True, kind="calibration", better="lower")
def ece(lists: RankedLists) -> float:
    """Paper 000's ECE (10 equal-width bins): over the queries with a relevant and a non-relevant
    candidate, relevant and non-relevant candidates balanced within each query by
    ``balanced_weights``; relevant = label > 0."""
    check_probabilities(lists)
    relevant = lists.row_labels > 0
    weights = balanced_weights(lists.row_query, relevant)
    if not weights.any():
        raise RankuqError(
            f"{lists.source}: no query has both a relevant and a non-relevant candidate, so the "
            "balanced ECE is undefined; use ECE.all (every candidate pooled)"
        )
    return expected_calibration_error(lists.scores, relevant, weights=weights)


@family("ECE.all", cutoff="none", pooled=True, kind="calibration", better="lower")
def ece_all(lists: RankedLists) -> float:
    """ECE with 10 equal-width bins over every candidate row of the evaluated queries (the lists'
    own prior); relevant = label > 0."""
    check_probabilities(lists)
    return expected_calibration_error(lists.scores, lists.row_labels > 0)
