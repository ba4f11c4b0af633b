"""BM25 over a set of texts (bm25s): one index, a query's scores over it, and the top rows of those
scores in an order every machine gives.

Shared by BM25 negative sampling (``tasks.negatives``) and the `bm25` baseline (``methods.bm25``).
bm25s' own top-k (``retrieve``) leaves ties to np.argpartition, whose tie order depends on the SIMD
sort numpy dispatches on the CPU (or to JAX's top_k where JAX is installed): on ClariQ's and WikiQA's
test lists a third and a seventh of the lists changed between AVX-512 and AVX2 dispatch
(rankuq/records/2026-11-30-bm25-ties-dispatch.json). ``top_rows`` breaks ties by corpus row instead.
"""

from collections.abc import Sequence

import numpy as np


class BM25Index:
    """bm25s' BM25 (its defaults: Lucene's variant, k1 = 1.5, b = 0.75) over ``texts``."""

    def __init__(self, texts: Sequence[str]) -> None:
        # Imported here, not at the top: bm25s imports JAX where it is installed and starts its backend
        # (threads, fork warnings), which `rankuq run` must not pay unless it needs BM25.
        import bm25s

        self._tokenize = bm25s.tokenize
        self._retriever = bm25s.BM25()
        self._retriever.index(bm25s.tokenize(list(texts), show_progress=False), show_progress=False)
        self.size = len(texts)

    def scores(self, query: str) -> np.ndarray:
        """BM25 of ``query`` against every text [size]; a query of stop words only scores 0 everywhere."""
        tokens = self._tokenize([query], return_ids=False, show_progress=False)[0]
        if not tokens:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self._retriever.get_scores(tokens))


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` highest-scoring rows (all of them when fewer), best first, equal scores by row, lowest
    first: the first k of one total order, so a larger k only appends rows."""
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]  # the k-th highest value: no ties in it
    rows = np.flatnonzero(scores >= kth)
    return rows[np.argsort(-scores[rows], kind="stable")][:k].astype(np.int64)
