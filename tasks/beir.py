"""BEIR-style folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

A query is every query-id of the split's qrels, its judged candidates the qrels rows (graded labels
kept; a negative grade counts as 0), the corpus every document (``title`` and ``text`` joined).
There are no native lists: negatives come from a strategy over the corpus. ``msmarco`` is BEIR's
MS MARCO passage release, whose ``qrels/test.tsv`` holds the graded TREC DL 2019 judgments
(paper 001); ``beir`` reads any other BEIR dataset put in ``beir/``.
"""

from pathlib import Path

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, SPLITS, Task, require_files
from rankuq.tasks.files import jsonl_rows, line_error, open_text, require_text, tsv_rows
from rankuq.tasks.pool import Pool, PoolBuilder

QRELS_HEADER = ("query-id", "corpus-id", "score")
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


def read_corpus(path: Path, builder: PoolBuilder) -> None:
    """Every document of a BEIR ``corpus.jsonl`` into the builder's corpus."""
    with open_text(path, "use a BEIR corpus.jsonl (one {_id, title, text} object per line)") as handle:
        for line, record in jsonl_rows(handle, path, ("_id", "text")):
            title = record.get("title") or ""
            text = require_text(path, line, "text", f"{title} {record['text']}")
            if record["_id"] in builder:
                raise line_error(path, line, f"document _id {record['_id']} appears twice; keep one")
            builder.candidate(record["_id"], text)


def add_queries(builder: PoolBuilder, qrels: Qrels, texts: dict[str, str], paths: tuple[Path, Path]) -> None:
    """One query per qrels query id; an id missing from the queries or the corpus raises."""
    qrels_path, queries_path = paths
    for qid, judgments in qrels.items():
        if qid not in texts:
            line = judgments[0][0]
            raise line_error(qrels_path, line, f"query id {qid} is not in {queries_path}; use matching files")
        judged: dict[int, int] = {}
        for line, doc, grade in judgments:
            if doc not in builder:
                message = f"document id {doc} is not in the corpus; use matching files"
                raise line_error(qrels_path, line, message)
            judged[builder.row(doc)] = grade
        builder.query(qid, [texts[qid]], judged)


def _read_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with open_text(path, "use a BEIR qrels TSV (query-id, corpus-id, score)") as handle:
        for line, row in tsv_rows(handle, path, QRELS_HEADER):
            if len(row) != len(QRELS_HEADER):
                raise line_error(path, line, f"{len(row)} tab-separated fields, expected 3 {QRELS_HEADER}")
            qrels.setdefault(row[0], []).append((line, row[1], parse_grade(row[2], line, path)))
    return qrels


def _read_queries(path: Path, wanted: Qrels) -> dict[str, str]:
    texts = {}
    with open_text(path, "use a BEIR queries.jsonl (one {_id, text} object per line)") as handle:
        for line, record in jsonl_rows(handle, path, ("_id", "text")):
            if record["_id"] in wanted:
                texts[record["_id"]] = require_text(path, line, "query text", record["text"])
    return texts


class BeirFolder(Task):
    """A BEIR-format dataset in ``<folder>/``."""

    folder: str

    def __init_subclass__(cls, **kwargs: object) -> None:
        files = (f"{cls.folder}/corpus.jsonl", f"{cls.folder}/queries.jsonl")
        cls.split_files = {split: (*files, f"{cls.folder}/qrels/{split}.tsv") for split in SPLITS}
        super().__init_subclass__(**kwargs)

    def pool(self, split: str, root: Path) -> Pool:
        corpus, queries, qrels_path = paths = self.source_files(root, split)
        require_files(paths)
        qrels = _read_qrels(qrels_path)
        if not qrels:
            raise RankuqError(f"{qrels_path}: no judgments after the header; use the file as released")
        builder = PoolBuilder(self.name, split, qrels_path, native=False)
        read_corpus(corpus, builder)
        add_queries(builder, qrels, _read_queries(queries, qrels), (qrels_path, queries))
        return builder.build()


@REGISTRY.register
class Beir(BeirFolder):
    name = "beir"
    folder = "beir"
    description = "any BEIR-format dataset put in beir/ (corpus, queries, qrels per split)"


@REGISTRY.register
class MsMarco(BeirFolder):
    name = "msmarco"
    folder = "msmarco"
    description = "MS MARCO passage, BEIR release (qrels/test.tsv = graded TREC DL 2019)"
