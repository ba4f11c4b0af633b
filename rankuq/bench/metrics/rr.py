"""Reciprocal rank (trec_eval ``recip_rank``, ir-measures ``RR``)."""

import numpy as np

from rankuq.bench.metrics.base import family
from rankuq.bench.metrics.matrix import RankedLists


@family("RR", cutoff="none")
def reciprocal_rank(lists: RankedLists) -> np.ndarray:
    """RR = 1 / rank of the first relevant candidate, per query; 0 when none is ranked."""
    relevant = lists.labels > 0
    return np.where(relevant.any(axis=1), 1.0 / (relevant.argmax(axis=1) + 1), 0.0)
