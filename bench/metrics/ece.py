"""Expected calibration error over candidate rows (paper 000 §3.1; Naeini et al., 2015)."""

import numpy as np

from bench.errors import RankuqError
from bench.metrics.base import family
from bench.metrics.matrix import RankedLists


def expected_calibration_error(scores: np.ndarray, relevant: np.ndarray, n_bins: int = 10) -> float:
    """ECE = Σ_b |B_b|/n · |avg(B_b) − rel(B_b)/|B_b||, over equal-width bins of [0, 1].

    Bin b holds b/n_bins <= score < (b+1)/n_bins, the last bin also 1.0 (edges are the doubles
    nearest b/n_bins, so a score written 0.1 lands in bin 1). Each bin term equals
    |Σ_B score − Σ_B relevant| / n; unlike paper 000's public code, the sum is not divided by
    the number of bins again.
    """
    edges = np.arange(n_bins + 1) / n_bins
    bins = np.minimum(np.searchsorted(edges, scores, side="right") - 1, n_bins - 1)
    gap = np.bincount(bins, weights=scores, minlength=n_bins) - np.bincount(
        bins, weights=relevant, minlength=n_bins
    )
    return float(np.abs(gap).sum() / scores.size)


@family("ECE", cutoff="none", pooled=True)
def ece(lists: RankedLists) -> float:
    """ECE with 10 bins over every candidate row of the evaluated queries; relevant = label > 0."""
    if not lists.probabilistic:
        raise RankuqError(
            f"{lists.source}: scores are not probabilities (the table is flagged "
            "non-probabilistic), so ECE is undefined; drop ECE or calibrate the scores first"
        )
    outside = np.flatnonzero((lists.scores < 0) | (lists.scores > 1))
    if outside.size:
        i = int(outside[0])
        raise RankuqError(
            f"{lists.source}: row {lists.rows[i]} (qid {lists.qids[lists.row_query[i]]}): score "
            f"{lists.scores[i]} is outside [0, 1]; scores are not probabilities, so ECE is "
            "undefined; drop ECE or calibrate the scores first"
        )
    return expected_calibration_error(lists.scores, lists.row_labels > 0)
