"""Recall at a cutoff (trec_eval ``recall_k``, ir-measures ``R@k``)."""

import numpy as np

from rankuq.bench.metrics.base import family, ratio
from rankuq.bench.metrics.matrix import RankedLists


@family("R", cutoff="required")
def recall(lists: RankedLists, k: int) -> np.ndarray:
    """R@k = |relevant in the top k| / |relevant judged|, per query; 0 with nothing relevant."""
    return ratio((lists.labels[:, :k] > 0).sum(axis=1), lists.n_relevant)
