"""``irds:<id>``: a dataset of ``ir_datasets`` (optional: ``pip install ir_datasets``) as a task.

Read where ir_datasets already holds the files (its cache, ``~/.ir_datasets``, or a dataset a
user registered over local files): these machines cannot download. An id with ``{split}`` names
one ir_datasets id per split (``irds:beir/scifact/{split}`` reads ``beir/scifact/train`` and
``beir/scifact/test``; ``dev`` maps to ``dev``); an id without it is a test-only task.

Like a BEIR folder: a query is every query id of the qrels, its judged candidates the qrels rows
(negative grades count as 0), the corpus every document (``default_text()``: title and text).
Documents with no text are skipped with their judgments, counted in warnings. Cache keys cover the
id, not file bytes: ir_datasets' versioned ids name immutable data.
"""

import logging
from pathlib import Path
from typing import Any

from rankuq.errors import RankuqError
from rankuq.tasks.base import SPLITS, Task, register_family
from rankuq.tasks.beir import Qrels, add_queries
from rankuq.tasks.pool import Pool, PoolBuilder

logger = logging.getLogger(__name__)

FIX = "ir_datasets reads it from its cache (~/.ir_datasets): fetch it where a network is reachable"


class IrDatasetsTask(Task):
    """A task over one ir_datasets id pattern (see the module docstring)."""

    pattern: str

    def dataset_id(self, split: str) -> str:
        self.check_split(split)
        return self.pattern.replace("{split}", split)

    def source_files(self, root: Path, split: str | None = None) -> list[Path]:
        if split is not None:
            self.check_split(split)
        return []  # the data is ir_datasets'; the id (in the cache key's settings) names it

    def pool(self, split: str, root: Path) -> Pool:
        dataset_id = self.dataset_id(split)
        where = Path(f"irds:{dataset_id}")
        dataset = _load(dataset_id)
        builder = PoolBuilder(self.name, split, where / "qrels", native=False)
        try:
            skipped = _read_docs(dataset, builder)
            qrels = _read_qrels(dataset, where / "qrels")
            texts = {query.query_id: query.default_text().strip() for query in dataset.queries_iter()}
        except RankuqError:
            raise
        except Exception as error:  # downloads that cannot happen here, missing files, bad archives
            reason = " ".join(str(error).split())[:200]
            raise RankuqError(
                f"irds:{dataset_id}: cannot read it ({type(error).__name__}: {reason}); {FIX}"
            ) from None
        add_queries(
            builder,
            qrels,
            {q: t for q, t in texts.items() if t},
            (where / "qrels", where / "queries"),
            skipped,
        )
        return builder.build()


def _load(dataset_id: str) -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise RankuqError(
            f"task 'irds:{dataset_id}' needs the ir_datasets package; pip install ir_datasets"
        ) from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise RankuqError(f"irds:{dataset_id}: not an ir_datasets id; see ir_datasets' catalogue") from None
    missing = [part for part in ("docs", "queries", "qrels") if not getattr(dataset, f"has_{part}")()]
    if missing:
        raise RankuqError(f"irds:{dataset_id} has no {' or '.join(missing)}; name an id with all three")
    return dataset


def _read_docs(dataset: Any, builder: PoolBuilder) -> set[str]:
    empty = set()
    for doc in dataset.docs_iter():
        text = doc.default_text().strip()
        if text:
            builder.candidate(doc.doc_id, text)
        else:
            empty.add(doc.doc_id)
    if empty:
        logger.warning("%s: skipped %d documents with no text", builder.source.parent, len(empty))
    return empty


def _read_qrels(dataset: Any, where: Path) -> Qrels:
    qrels: Qrels = {}
    for line, qrel in enumerate(dataset.qrels_iter(), start=1):
        if not -128 <= qrel.relevance <= 127:
            raise RankuqError(f"{where}: line {line}: relevance grade {qrel.relevance} is outside -128..127")
        qrels.setdefault(qrel.query_id, []).append((line, qrel.doc_id, max(int(qrel.relevance), 0)))
    if not qrels:
        raise RankuqError(f"{where}: no judgments; name an id with qrels")
    return qrels


_TASKS: dict[str, type[IrDatasetsTask]] = {}


def irds_task(pattern: str) -> type[IrDatasetsTask]:
    """The task ``irds:<pattern>`` (one class per pattern)."""
    if not pattern.strip() or "{" in pattern.replace("{split}", ""):
        raise RankuqError(f"task 'irds:{pattern}': name an ir_datasets id, e.g. irds:beir/scifact/{{split}}")
    if pattern not in _TASKS:
        splits = SPLITS if "{split}" in pattern else ("test",)
        attributes = {
            "name": f"irds:{pattern}",
            "description": f"ir_datasets {pattern}",
            "pattern": pattern,
            "split_files": dict.fromkeys(splits, ()),
        }
        _TASKS[pattern] = type("IrDatasetsTask", (IrDatasetsTask,), attributes)
    return _TASKS[pattern]


register_family("irds:", "<id>", irds_task)
