"""What candidate lists are built from: a split's queries, their judged candidates and the corpus."""

from dataclasses import dataclass, field
from pathlib import Path

from rankuq.contract import EXTRA_COLUMNS
from rankuq.errors import RankuqError


@dataclass(frozen=True)
class Pool:
    """One split of a task, before lists are cut.

    ``judged[i]`` holds (corpus row, label) pairs of query ``i``: its whole candidate list in file
    order when ``native``, otherwise only the judgments (qrels) the files give. The corpus
    (``cids``/``texts``, unique cids) is what negatives are sampled from.
    """

    task: str
    split: str
    source: Path  # the file errors about the pool as a whole name
    native: bool
    qids: list[str]
    contexts: list[list[str]]
    judged: list[list[tuple[int, int]]]
    cids: list[str]
    texts: list[str]
    extras: dict[str, list[int | None]] = field(default_factory=dict)  # per query, EXTRA_COLUMNS


class PoolBuilder:
    """Collects queries and candidates while a loader parses its files; ``build()`` freezes them."""

    def __init__(self, task: str, split: str, source: Path, *, native: bool) -> None:
        self.task, self.split, self.source, self.native = task, split, source, native
        self.qids: list[str] = []
        self.contexts: list[list[str]] = []
        self.judged: list[list[tuple[int, int]]] = []
        self.cids: list[str] = []
        self.texts: list[str] = []
        self.extras: dict[str, list[int | None]] = {}
        self._row_of: dict[str, int] = {}

    def __contains__(self, cid: str) -> bool:
        return cid in self._row_of

    def candidate(self, cid: str, text: str) -> int:
        """The corpus row of ``cid``, added on first sight (a repeated cid keeps its first text)."""
        row = self._row_of.get(cid)
        if row is None:
            row = self._row_of[cid] = len(self.cids)
            self.cids.append(cid)
            self.texts.append(text)
        return row

    def row(self, cid: str) -> int:
        return self._row_of[cid]

    def query(self, qid: str, context: list[str], judged: dict[int, int], **extras: int | None) -> None:
        """Add a query with its judged candidates (corpus row → label, in list order)."""
        for name in extras:
            if name not in EXTRA_COLUMNS.names:
                raise ValueError(f"'{name}' is not one of the contract's extra columns")
        index = len(self.qids)
        self.qids.append(qid)
        self.contexts.append(context)
        self.judged.append(list(judged.items()))
        for name, value in extras.items():
            self.extras.setdefault(name, [None] * index).append(value)
        for name, values in self.extras.items():
            if name not in extras:
                values.append(None)

    def build(self) -> Pool:
        if not self.qids:
            raise RankuqError(f"{self.source}: no queries for split {self.split}; use the file as released")
        return Pool(
            task=self.task,
            split=self.split,
            source=self.source,
            native=self.native,
            qids=self.qids,
            contexts=self.contexts,
            judged=self.judged,
            cids=self.cids,
            texts=self.texts,
            extras=self.extras,
        )
