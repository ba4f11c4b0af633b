"""Negative-sampling strategies: where the non-relevant candidates of a list come from.

``negatives.get("bm25")(cache_dir)`` gives a strategy; ``candidates()`` returns, per query, corpus
rows in order of preference. The caller (``tasks.lists``) skips the query's relevant candidates,
so no strategy has to: a list's negatives can never hold a relevant candidate.
"""

import zlib
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

from rankuq.errors import RankuqError
from rankuq.registry import Registry
from rankuq.tasks.pool import Pool


def query_rng(seed: int, key: str, purpose: str) -> np.random.Generator:
    """A generator fixed by (seed, key, purpose); keyed by qid, a query's draws ignore the others."""
    return np.random.default_rng([seed, zlib.crc32(f"{purpose}\0{key}".encode())])


class Strategy(ABC):
    """Ranks corpus rows as negative candidates for the queries of a pool."""

    name: str
    description: str
    needs_native: bool = False  # only pools whose files hold whole lists support it

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir  # where expensive intermediates (embeddings) may be kept

    @abstractmethod
    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        """For each query index in ``queries``, at least ``depth`` corpus rows (fewer only when the
        pool has fewer), best negative first."""


REGISTRY: Registry[type[Strategy]] = Registry("negative-sampling strategy")
get = REGISTRY.get
names = REGISTRY.names


def _contexts(pool: Pool, queries: np.ndarray) -> list[str]:
    """The query text retrievers see: the dialogue turns joined."""
    return [" ".join(pool.contexts[q]) for q in queries]


@REGISTRY.register
class Native(Strategy):
    name = "native"
    description = "the dataset's own lists (e.g. WikiQA's page sentences), negatives in random order"
    needs_native = True

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        out = []
        for q in queries:
            rows = np.array([row for row, label in pool.judged[q] if label <= 0], dtype=np.int64)
            out.append(rows[query_rng(seed, pool.qids[q], "native").permutation(rows.size)])
        return out


@REGISTRY.register
class Random(Strategy):
    name = "random"
    description = "uniform draws from the split's corpus (NS_random, paper 000)"

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        size = len(pool.cids)
        return [
            query_rng(seed, pool.qids[q], "random").choice(size, min(size, int(d)), replace=False)
            for q, d in zip(queries, depth, strict=True)
        ]


@REGISTRY.register
class BM25(Strategy):
    name = "bm25"
    description = "top BM25 (bm25s) candidates of the corpus, context as query (NS_classic, paper 000)"

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(pool.texts, show_progress=False), show_progress=False)
        tokens = bm25s.tokenize(_contexts(pool, queries), return_ids=False, show_progress=False)
        k = min(len(pool.texts), int(depth.max(initial=1)))
        rows, _ = retriever.retrieve(tokens, k=k, show_progress=False)
        return list(rows.astype(np.int64))


@REGISTRY.register
class Dense(Strategy):
    name = "dense"
    description = "nearest candidates by offline all-MiniLM-L6-v2 embeddings, faiss inner product"

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        try:
            import faiss
        except ImportError:
            raise RankuqError(
                "negative sampling 'dense' needs faiss: pip install 'rankuq[cpu]' (or 'rankuq[gpu]' on CUDA)"
            ) from None

        from rankuq.tasks.embeddings import embed

        corpus = embed(pool.texts, self.cache_dir)
        index = faiss.IndexFlatIP(corpus.shape[1])
        index.add(corpus)
        k = min(len(pool.texts), int(depth.max(initial=1)))
        # every query of the pool, so that lists of any variant share one cached encoding
        contexts = embed(_contexts(pool, np.arange(len(pool.qids))), self.cache_dir)
        _, rows = index.search(contexts[queries], k)
        return list(rows.astype(np.int64))
