"""Normalised DCG (trec_eval ``ndcg`` / ``ndcg_cut_k``, ir-measures ``nDCG`` / ``nDCG@k``)."""

import numpy as np

from rankuq.bench.metrics.base import family, ratio
from rankuq.bench.metrics.matrix import RankedLists


@family("nDCG", cutoff="optional")
def ndcg(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k with DCG@k = Σ_{r=1..k} label_r / log2(r + 1), per query.

    Gain is the graded label itself (linear); IDCG@k is the DCG@k of the judged labels sorted
    descending; 0 for a query with nothing relevant. Without k the whole lists count.
    """
    return ratio(_dcg(lists.labels, k), _dcg(lists.ideal, k))


def _dcg(gains: np.ndarray, k: int | None) -> np.ndarray:
    gains = gains[:, :k]
    return gains @ (1.0 / np.log2(np.arange(2, gains.shape[1] + 2)))
