"""ClariQ (Aliannejadi et al., 2020/2021): ranking clarifying questions in conversational search.

A query is a topic: its context is the user's initial request, its relevant candidates are the
question_ids the split file lists for it (label 1), and the corpus is the whole question bank. ClariQ
has no native lists, so every list is built by negative sampling. The topic's
``clarification_need`` (1–4, should the system answer or ask?) rides along as an extra column.

Two choices the files force: the bank's empty question (Q00001, "ask nothing") is not a candidate,
since an empty text cannot be ranked; a topic listed with two request phrasings (one test topic)
keeps the first.
"""

from pathlib import Path
from typing import ClassVar

from rankuq.tasks.base import REGISTRY, Task, require_files
from rankuq.tasks.files import line_error, open_text, require_text, tsv_rows
from rankuq.tasks.pool import Pool, PoolBuilder

HEADER = (
    "topic_id",
    "initial_request",
    "topic_desc",
    "clarification_need",
    "facet_id",
    "facet_desc",
    "question_id",
    "question",
    "answer",
)
TOPIC, REQUEST, NEED, QUESTION_ID = (
    HEADER.index(name) for name in ("topic_id", "initial_request", "clarification_need", "question_id")
)
BANK = "clariq/question_bank.tsv"
BANK_HEADER = ("question_id", "question")
NEEDS = {"1": 1, "2": 2, "3": 3, "4": 4}
FIX = "restore the original ClariQ file"


@REGISTRY.register
class ClariQ(Task):
    """ClariQ topics ranked over the clarifying-question bank (no native lists)."""

    name = "clariq"
    description = "ClariQ clarifying-question ranking over the question bank; clarification_need kept"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        "train": ("clariq/train.tsv", BANK),
        "dev": ("clariq/dev.tsv", BANK),
        "test": ("clariq/test_with_labels.tsv", BANK),
    }

    def pool(self, split: str, root: Path) -> Pool:
        path, bank = self.source_files(root, split)
        require_files([path, bank])
        builder = PoolBuilder(self.name, split, path, native=False)
        empty = _read_bank(bank, builder)
        topics: dict[str, tuple[str, int, dict[int, int]]] = {}
        with open_text(path, FIX) as handle:
            for line, row in tsv_rows(handle, path, HEADER):
                _add_row(topics, row, (line, path), builder, empty)
        for topic, (request, need, relevant) in topics.items():
            builder.query(topic, [request], relevant, clarification_need=need)
        return builder.build()


def _read_bank(path: Path, builder: PoolBuilder) -> set[str]:
    """Every non-empty question of the bank becomes a corpus candidate; the ids of empty ones."""
    empty = set()
    with open_text(path, FIX) as handle:
        for line, row in tsv_rows(handle, path, BANK_HEADER):
            if len(row) != len(BANK_HEADER):
                raise line_error(path, line, f"{len(row)} tab-separated fields, expected 2 ({BANK_HEADER})")
            cid = require_text(path, line, "question_id", row[0])
            if cid in builder or cid in empty:
                raise line_error(path, line, f"question_id {cid} appears twice; keep one")
            if row[1].strip():
                builder.candidate(cid, row[1])
            else:
                empty.add(cid)
    return empty


def _add_row(
    topics: dict[str, tuple[str, int, dict[int, int]]],
    row: list[str],
    where: tuple[int, Path],
    builder: PoolBuilder,
    empty: set[str],
) -> None:
    """Record one (topic, facet, question) row: the topic's request and need, one relevant question."""
    line, path = where
    if len(row) != len(HEADER):
        raise line_error(
            path, line, f"{len(row)} tab-separated fields, expected {len(HEADER)} ({' '.join(HEADER)})"
        )
    topic = require_text(path, line, "topic_id", row[TOPIC])
    request = require_text(path, line, "initial_request", row[REQUEST])
    if row[NEED] not in NEEDS:
        raise line_error(path, line, f"clarification_need is '{row[NEED]}', expected 1, 2, 3 or 4")
    question = require_text(path, line, "question_id", row[QUESTION_ID])
    request, need, relevant = topics.setdefault(topic, (request, NEEDS[row[NEED]], {}))
    if NEEDS[row[NEED]] != need:
        raise line_error(path, line, f"topic {topic} has two clarification_need values; keep one")
    if question in builder:
        relevant[builder.row(question)] = 1
    elif question not in empty:
        raise line_error(
            path, line, f"question_id {question} is not in {BANK}; use the bank released with this file"
        )
