"""TREC test collections: a topics file, a qrels file and a BEIR-style ``corpus.jsonl`` (Cohen et al., 2021).

``<folder>/topics.txt`` is either TREC SGML (``<top> <num> Number: 301 <title> …``; the title is
the query, as Cohen et al. (2021) use Robust04) or TSV ``qid<TAB>query`` (the TREC DL query files).
``<folder>/qrels.txt`` is ``qid iteration docid grade``. Only a test split: these collections
evaluate models trained elsewhere (MS MARCO → Robust04, TREC DL 2019).
"""

import re
from pathlib import Path

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, Task, require_files
from rankuq.tasks.beir import Qrels, add_queries, read_corpus
from rankuq.tasks.files import line_error, open_text, require_text
from rankuq.tasks.pool import Pool, PoolBuilder
from rankuq.tasks.trec_format import read_trec_qrels

TOPIC = re.compile(r"<top>(.*?)</top>", re.DOTALL | re.IGNORECASE)
NUMBER = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.IGNORECASE)
TITLE = re.compile(r"<title>\s*(?:Topic:)?(.*?)(?=<\w+>|$)", re.DOTALL | re.IGNORECASE)


def read_topics(path: Path) -> dict[str, str]:
    """Query id → query text, from SGML topics (their title) or a qid<TAB>text file."""
    with open_text(path, "use a TREC topics file (SGML <top> blocks or qid<TAB>query lines)") as handle:
        text = handle.read()
    sgml = text.lstrip().lower().startswith("<top>")
    topics = _sgml_topics(text, path) if sgml else _tsv_topics(text, path)
    if not topics:
        raise RankuqError(f"{path}: no topics; use a TREC topics file")
    return topics


def _tsv_topics(text: str, path: Path) -> dict[str, str]:
    topics = {}
    for line, row in enumerate(text.splitlines(), start=1):
        if row.strip():
            qid, tab, query = row.partition("\t")
            if not tab:
                raise line_error(path, line, "expected qid<TAB>query")
            topics[qid.strip()] = require_text(path, line, "query", query)
    return topics


def _sgml_topics(text: str, path: Path) -> dict[str, str]:
    """The title of each ``<top>`` block, which may run over lines until the next tag."""
    topics = {}
    for block in TOPIC.finditer(text):
        line = text.count("\n", 0, block.start()) + 1
        number, title = NUMBER.search(block[1]), TITLE.search(block[1])
        if number is None or title is None:
            raise line_error(path, line, "topic without <num> Number or <title>; use the file as released")
        query = " ".join(title[1].split())
        topics[number[1]] = require_text(path, line, f"<title> of topic {number[1]}", query)
    return topics


def judgments(path: Path) -> Qrels:
    """The collection's qrels (``read_trec_qrels``; TREC's negative junk grades read as 0), grouped by
    query id in file order: qid → [(line, docid, grade)]."""
    table = read_trec_qrels(path, lines=True, negative_as_zero=True)
    qrels: Qrels = {}
    for qid, docid, grade, line in zip(
        *(table[name].to_pylist() for name in table.column_names), strict=True
    ):
        qrels.setdefault(qid, []).append((line, docid, grade))
    return qrels


class TrecFolder(Task):
    """A TREC collection in ``<folder>/``: topics, qrels and a corpus, one test split."""

    folder: str

    def __init_subclass__(cls, **kwargs: object) -> None:
        names = ("topics.txt", "qrels.txt", "corpus.jsonl")
        cls.split_files = {"test": tuple(f"{cls.folder}/{name}" for name in names)}
        super().__init_subclass__(**kwargs)

    def pool(self, split: str, root: Path) -> Pool:
        topics, qrels_path, corpus = paths = self.source_files(root, split)
        require_files(paths)
        qrels = judgments(qrels_path)
        builder = PoolBuilder(self.name, split, qrels_path, native=False)
        skipped = read_corpus(corpus, builder)
        add_queries(builder, qrels, read_topics(topics), (qrels_path, topics), skipped)
        return builder.build()


@REGISTRY.register
class Robust04(TrecFolder):
    name = "robust04"
    folder = "robust04"
    description = "TREC Robust04, title queries (MS MARCO → Robust04, Cohen et al., 2021), test only"


@REGISTRY.register
class TrecDl19(TrecFolder):
    name = "trec_dl19"
    folder = "trec_dl19"
    description = "TREC Deep Learning 2019 passage, graded qrels (Cohen et al., 2021), test only"
