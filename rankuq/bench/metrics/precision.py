"""Precision at a cutoff (trec_eval ``P_k``, ir-measures ``P@k``)."""

import numpy as np

from rankuq.bench.metrics.base import family
from rankuq.bench.metrics.matrix import RankedLists


@family("P", cutoff="required")
def precision(lists: RankedLists, k: int) -> np.ndarray:
    """P@k = |relevant in the top k| / k, per query; k even when fewer than k are ranked."""
    return np.asarray((lists.labels[:, :k] > 0).sum(axis=1) / k)
