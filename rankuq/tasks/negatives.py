"""Negative-sampling strategies: where the non-relevant candidates of a list come from.

``negatives.get("bm25")(cache_dir)`` gives a strategy; ``candidates()`` returns, per query, corpus
rows in order of preference. The caller (``tasks.lists``) skips the query's relevant candidates,
so no strategy has to: a list's negatives can never hold a relevant candidate.

``run:<path>`` is the exception: a first-stage TREC run to rerank. Its lists are the TREC run's top
n documents of each query as they are, relevant or not (``from_trec_run``); see ``TrecRun``.
"""

import zlib
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np

from rankuq.errors import RankuqError
from rankuq.lexical import BM25Index, top_rows
from rankuq.registry import Registry
from rankuq.tasks.files import line_error
from rankuq.tasks.pool import Pool
from rankuq.tasks.trec_format import TREC_RUN_LAYOUT, read_trec_run


def query_rng(seed: int, key: str, purpose: str) -> np.random.Generator:
    """A generator fixed by (seed, key, purpose); keyed by qid, a query's draws ignore the others."""
    return np.random.default_rng([seed, zlib.crc32(f"{purpose}\0{key}".encode())])


class Strategy(ABC):
    """Ranks corpus rows as negative candidates for the queries of a pool."""

    name: str
    description: str
    needs_native: bool = False  # only pools whose files hold whole lists support it
    judged_lists: bool = False  # lists of judged candidates only: kept whole when no n is given
    from_trec_run: bool = False  # lists are the strategy's top n as they are (no relevant ones added)
    files: tuple[Path, ...] = ()  # files besides the task's that its lists depend on (cache keys hash them)
    version: int = 0  # bump when its lists change for the same files; cache keys hold it once above 0

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir  # where expensive intermediates (embeddings) may be kept

    @abstractmethod
    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        """For each query index in ``queries``, at least ``depth`` corpus rows (fewer only when the
        pool has fewer), best negative first."""


REGISTRY: Registry[type[Strategy]] = Registry("negative-sampling strategy")
names = REGISTRY.names


def get(name: str) -> type[Strategy]:
    """The strategy ``name``; ``run:<path>`` binds the ``run`` strategy to a TREC run file."""
    kind, colon, argument = name.partition(":")
    if colon and kind == TrecRun.name:
        return TrecRun.bound(argument)
    return REGISTRY.get(name)


def query_texts(pool: Pool, queries: np.ndarray) -> list[str]:
    """The query text retrievers see: the dialogue turns joined."""
    return [" ".join(pool.contexts[q]) for q in queries]


@REGISTRY.register
class Native(Strategy):
    name = "native"
    description = "the dataset's own lists (e.g. WikiQA's page sentences), negatives in random order"
    needs_native = True
    judged_lists = True

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        out = []
        for q in queries:
            rows = np.array([row for row, label in pool.judged[q] if label <= 0], dtype=np.int64)
            out.append(rows[query_rng(seed, pool.qids[q], "native").permutation(rows.size)])
        return out


@REGISTRY.register
class Judged(Native):
    """Native's lists for any dataset: a BEIR folder's qrels may judge whole candidate lists
    (answer-selection sets in BEIR form), which are then its lists. Same draws as native, so on a
    dataset with native lists both give the same lists."""

    name = "judged"
    description = "the candidates the qrels judge (grade 0: the negatives, in random order); any dataset"
    needs_native = False

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        out = super().candidates(pool, queries, depth, seed)
        if queries.size and not any(rows.size for rows in out):
            raise RankuqError(
                f"{pool.source}: no query of {pool.task}/{pool.split} has a judged non-relevant "
                "candidate (a qrels row of grade 0), so ns: judged has no negatives; use bm25, random "
                "or dense"
            )
        return out


@REGISTRY.register
class Random(Strategy):
    name = "random"
    description = "uniform draws from the split's corpus (NS_random, Penha & Hauff, 2021)"

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        size = len(pool.cids)
        return [
            query_rng(seed, pool.qids[q], "random").choice(size, min(size, int(d)), replace=False)
            for q, d in zip(queries, depth, strict=True)
        ]


@REGISTRY.register
class BM25(Strategy):
    name = "bm25"
    description = (
        "top BM25 (bm25s) candidates, context as query, equal scores by corpus row "
        "(NS_classic, Penha & Hauff, 2021)"
    )
    version = 1  # 1: equal scores ordered by corpus row (``lexical.top_rows``), not by the CPU's sort

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        index = BM25Index(pool.texts)
        k = int(depth.max(initial=1))  # every query the deepest's depth: spare rows where texts repeat
        return [top_rows(index.scores(text), k) for text in query_texts(pool, queries)]


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
        contexts = embed(query_texts(pool, np.arange(len(pool.qids))), self.cache_dir)
        _, rows = index.search(contexts[queries], k)
        return list(rows.astype(np.int64))


@REGISTRY.register
class TrecRun(Strategy):
    """The top n documents of a TREC run per query, named ``run:<path>`` (ns in a grid, strategy in
    ``build_shards``); a relative path is taken from the current directory.

    Lists are the TREC run's documents as they are, labelled by the task's judgments (unjudged: 0),
    so a query's relevant documents it missed are missing from its list too, as when reranking any
    first stage. ``n`` is k (10 by default); a query with fewer documents in the TREC run keeps
    them all, one absent from it has no list. Order follows trec_eval: score descending,
    ties by docno descending; the rank column is ignored. Only the ``standard`` variant applies.
    """

    name = "run"
    description = "rerank a first-stage TREC run: run:<path>, the top n documents of each query"
    from_trec_run = True
    path: Path | None = None

    @classmethod
    def bound(cls, path: str) -> type["TrecRun"]:
        """The strategy reading ``path``, checked to be a file now (when a grid loads)."""
        where = f"negative-sampling strategy 'run:{path}'"
        if not path.strip():
            raise RankuqError(f"{where}: name the run file, e.g. run:runs/bm25.trec")
        file = Path(path).expanduser().resolve()
        if not file.is_file():
            raise RankuqError(f"{where}: run file not found: {file}; give a TREC run ({TREC_RUN_LAYOUT})")
        return type("TrecRun", (cls,), {"name": f"run:{path}", "path": file, "files": (file,)})

    def candidates(self, pool: Pool, queries: np.ndarray, depth: np.ndarray, seed: int) -> list[np.ndarray]:
        if self.path is None:
            raise RankuqError("the run strategy needs a run file: name it run:<path>")
        ranking = ranked_documents(self.path)
        if not ranking.keys() & set(pool.qids):
            raise RankuqError(
                f"{self.path}: none of its {len(ranking)} queries is a query of {pool.task}/{pool.split}; "
                "use a run of this split's queries"
            )
        row_of = {cid: row for row, cid in enumerate(pool.cids)}
        out = []
        for q, d in zip(queries, depth, strict=True):
            docs = ranking.get(pool.qids[q], [])[: int(d)]
            for line, doc in docs:
                if doc not in row_of:
                    raise line_error(
                        self.path,
                        line,
                        f"document {doc} is not in the corpus of {pool.task}/{pool.split}; "
                        "use a run over this task's documents",
                    )
            out.append(np.array([row_of[doc] for _, doc in docs], dtype=np.int64))
        return out


def ranked_documents(path: Path) -> dict[str, list[tuple[int, str]]]:
    """qid → (line, docno) of the TREC run ``path`` (``read_trec_run``), best first in trec_eval's order:
    score descending, ties by docno descending."""
    frame = read_trec_run(path, lines=True).to_pandas()
    frame = frame.sort_values(["qid", "score", "cid"], ascending=[True, False, False], kind="stable")
    return {
        str(qid): list(zip(group.line.tolist(), group.cid.tolist(), strict=True))
        for qid, group in frame.groupby("qid", sort=False)
    }
