"""BEIR-style folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

A query is every query-id of the split's qrels, its judged candidates the qrels rows (graded labels
kept; a negative grade counts as 0), the corpus every document (``title`` and ``text`` joined).
There are no native lists: negatives come from a strategy over the corpus. ``msmarco`` is BEIR's
MS MARCO passage release, whose ``qrels/test.tsv`` holds the graded TREC DL 2019 judgments
(Cohen et al., 2021); ``beir/<name>`` reads the BEIR dataset in ``beir/<name>/`` (``beir`` alone reads
files put directly in ``beir/``).

A task has the splits its qrels folder has: asking a test-only dataset (most of BEIR) for train
names the splits it has. Real corpora hold a few documents with no title and no text; they are
skipped, and so are their judgments and any query left with none, each counted in one warning.
"""

import logging
import re
from collections.abc import Container
from pathlib import Path

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, SPLITS, Task, register_family, require_files
from rankuq.tasks.files import jsonl_rows, line_error, open_text, require_text, tsv_rows
from rankuq.tasks.pool import Pool, PoolBuilder

logger = logging.getLogger(__name__)

QRELS_HEADER = ("query-id", "corpus-id", "score")
DATASET = re.compile(r"[\w.-]+(/[\w.-]+)*")  # nested folders too (BEIR's cqadupstack/android)
# qid → [(line, doc id, grade)], in file order.
Qrels = dict[str, list[tuple[int, str, int]]]


def parse_grade(value: str, line: int, path: Path) -> int:
    """A relevance grade as a contract label: an integer, negative grades (junk) counted as 0."""
    try:
        grade = int(value)
    except ValueError:
        raise line_error(path, line, f"relevance grade is '{value}', expected an integer") from None
    if grade > 127:
        raise line_error(path, line, f"relevance grade {grade} is above 127")
    return max(grade, 0)


def read_corpus(path: Path, builder: PoolBuilder) -> set[str]:
    """Every document of a BEIR ``corpus.jsonl`` into the builder's corpus; the ids of empty ones.

    A document with no title and no text cannot be ranked: it is skipped, counted in one warning.
    """
    empty: set[str] = set()
    with open_text(path, "use a BEIR corpus.jsonl (one {_id, title, text} object per line)") as handle:
        for line, record in jsonl_rows(handle, path, ("_id", "text")):
            if record["_id"] in builder or record["_id"] in empty:
                raise line_error(path, line, f"document _id {record['_id']} appears twice; keep one")
            text = f"{record.get('title') or ''} {record['text']}".strip()
            if text:
                builder.candidate(record["_id"], text)
            else:
                empty.add(record["_id"])
    if empty:
        logger.warning("%s: skipped %d documents with no title and no text", path, len(empty))
    return empty


def add_queries(
    builder: PoolBuilder,
    qrels: Qrels,
    texts: dict[str, str],
    paths: tuple[Path, Path],
    skipped: Container[str] = frozenset(),
) -> None:
    """One query per qrels query id; an id missing from the queries or the corpus raises.

    Judgments of ``skipped`` documents are dropped, and queries left without any, in one warning.
    """
    qrels_path, queries_path = paths
    dropped = emptied = 0
    for qid, judgments in qrels.items():
        if qid not in texts:
            line = judgments[0][0]
            raise line_error(qrels_path, line, f"query id {qid} is not in {queries_path}; use matching files")
        judged: dict[int, int] = {}
        for line, doc, grade in judgments:
            if doc in skipped:
                dropped += 1
            elif doc not in builder:
                message = f"document id {doc} is not in the corpus; use matching files"
                raise line_error(qrels_path, line, message)
            else:
                judged[builder.row(doc)] = grade
        if judged:
            builder.query(qid, [texts[qid]], judged)
        else:
            emptied += 1
    if dropped:
        logger.warning(
            "%s: dropped %d judgments of documents with no title and no text (%d queries left with none)",
            *(qrels_path, dropped, emptied),
        )


def _read_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with open_text(path, "use a BEIR qrels TSV (query-id, corpus-id, score)") as handle:
        for line, row in tsv_rows(handle, path, QRELS_HEADER):
            if len(row) != len(QRELS_HEADER):
                raise line_error(path, line, f"{len(row)} tab-separated fields, expected 3 {QRELS_HEADER}")
            qrels.setdefault(row[0], []).append((line, row[1], parse_grade(row[2], line, path)))
    return qrels


def _read_queries(path: Path, wanted: Qrels) -> dict[str, str]:
    """The text of each ``wanted`` query; a judged query _id given twice with two texts raises."""
    texts: dict[str, str] = {}
    with open_text(path, "use a BEIR queries.jsonl (one {_id, text} object per line)") as handle:
        for line, record in jsonl_rows(handle, path, ("_id", "text")):
            qid = record["_id"]
            if qid in wanted:
                text = require_text(path, line, "query text", record["text"])
                if texts.setdefault(qid, text) != text:
                    raise line_error(
                        path, line, f"query _id {qid} appears twice with different texts; keep one"
                    )
    return texts


class BeirFolder(Task):
    """A BEIR-format dataset in ``<folder>/``, with the splits its ``qrels/`` folder has."""

    folder: str

    def __init_subclass__(cls, **kwargs: object) -> None:
        files = (f"{cls.folder}/corpus.jsonl", f"{cls.folder}/queries.jsonl")
        cls.split_files = {split: (*files, f"{cls.folder}/qrels/{split}.tsv") for split in SPLITS}
        super().__init_subclass__(**kwargs)

    def available_splits(self, root: Path) -> tuple[str, ...]:
        """The splits whose qrels file exists under ``root``."""
        return tuple(split for split in SPLITS if (root / self.folder / "qrels" / f"{split}.tsv").is_file())

    def source_files(self, root: Path, split: str | None = None) -> list[Path]:
        """As ``Task.source_files``; a split without a qrels file raises, naming the splits there are."""
        if split is None:  # what caches hash: the files there are
            return [path for path in super().source_files(root) if path.is_file()]
        files = super().source_files(root, split)
        for path in files:
            packed = path.with_name(f"{path.name}.gz")
            if not path.is_file() and packed.is_file():
                raise RankuqError(f"{packed}: gzip is not read in a BEIR folder; gunzip it to {path.name}")
        if not files[-1].is_file() and files[-1].parent.is_dir():
            have = self.available_splits(root)
            only = f"; {self.name} is test-only: use it as a shift's test side" if have == ("test",) else ""
            raise RankuqError(
                f"{files[-1]} not found: {self.name} has no {split} split; its qrels folder has "
                f"{', '.join(have) or 'no split file'}{only}"
            )
        return files

    def pool(self, split: str, root: Path) -> Pool:
        corpus, queries, qrels_path = paths = self.source_files(root, split)
        require_files(paths, root)
        qrels = _read_qrels(qrels_path)
        if not qrels:
            raise RankuqError(f"{qrels_path}: no judgments after the header; use the file as released")
        if all(grade == 0 for judgments in qrels.values() for _, _, grade in judgments):
            raise RankuqError(
                f"{qrels_path}: every judgment is 0 (not relevant), so no query has a relevant document "
                "to rank; judge the relevant documents 1 or more"
            )
        builder = PoolBuilder(self.name, split, qrels_path, native=False)
        skipped = read_corpus(corpus, builder)
        add_queries(builder, qrels, _read_queries(queries, qrels), (qrels_path, queries), skipped)
        return builder.build()


@REGISTRY.register
class Beir(BeirFolder):
    name = "beir"
    folder = "beir"
    description = (
        "BEIR-format datasets: beir/<name> reads beir/<name>/ (corpus, queries, qrels/<split>.tsv; the "
        "splits its qrels folder has); beir alone reads files put directly in beir/"
    )


_DATASETS: dict[str, type[BeirFolder]] = {}


def dataset(name: str) -> type[BeirFolder]:
    """The task ``beir/<name>``, reading ``<data>/beir/<name>/`` (one class per name)."""
    if not DATASET.fullmatch(name) or {".", ".."} & set(name.split("/")):
        raise RankuqError(f"task 'beir/{name}': name a folder under beir/, e.g. beir/scifact")
    if name not in _DATASETS:
        attributes = {
            "name": f"beir/{name}",
            "folder": f"beir/{name}",
            "description": f"the BEIR dataset in beir/{name}/",
        }
        _DATASETS[name] = type(f"Beir[{name}]", (BeirFolder,), attributes)
    return _DATASETS[name]


register_family("beir/", "<name>", dataset)


@REGISTRY.register
class MsMarco(BeirFolder):
    name = "msmarco"
    folder = "msmarco"
    description = "MS MARCO passage, BEIR release (qrels/test.tsv = graded TREC DL 2019)"
