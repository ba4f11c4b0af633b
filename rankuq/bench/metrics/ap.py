"""Average precision (trec_eval ``map`` / ``map_cut_k``, ir-measures ``AP`` / ``AP@k``)."""

import numpy as np

from rankuq.bench.metrics.base import family, ratio
from rankuq.bench.metrics.matrix import RankedLists


@family("AP", cutoff="optional")
def average_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """AP@k = Σ_{r ≤ k, rank r relevant} P@r / |relevant judged|, per query (k: whole list).

    Relevant candidates ranked below k, or not ranked at all, add 0 but stay in the denominator.
    """
    relevant = lists.labels[:, :k] > 0
    precision_at = np.cumsum(relevant, axis=1) / np.arange(1, relevant.shape[1] + 1)
    return ratio((precision_at * relevant).sum(axis=1), lists.n_relevant)
