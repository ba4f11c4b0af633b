"""WikiQA (Yang, Yih & Meek, 2015): answer-sentence selection with real unanswerable questions.

Native lists: one per question, the sentences of one Wikipedia page in file order. Questions with
no correct sentence are kept and flagged ``nota`` (ranking metrics usually skip them): a natural
NOTA set beside the synthetic one of ``variant="nota"``. The corpus other strategies sample
negatives from is every sentence of the split.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, SPLITS, Task, require_files
from rankuq.tasks.files import line_error, open_text, require_text, tsv_rows
from rankuq.tasks.pool import Pool, PoolBuilder

HEADER = (
    "QuestionID",
    "Question",
    "DocumentID",
    "DocumentTitle",
    "SentenceID",
    "Sentence",
    "Label",
)
QID, QUESTION, CID, SENTENCE, LABEL = (
    HEADER.index(name) for name in ("QuestionID", "Question", "SentenceID", "Sentence", "Label")
)
LABELS = {"0": 0, "1": 1}
FIX = "restore the original WikiQA file"


@REGISTRY.register
class WikiQA(Task):
    """WikiQA questions ranked over their page's sentences (native lists)."""

    name = "wikiqa"
    description = "WikiQA answer-sentence selection; native lists are the page's sentences; NOTA flagged"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        split: (f"wikiqa/WikiQA-{split}.tsv.gz",) for split in SPLITS
    }
    native_splits = SPLITS

    def pool(self, split: str, root: Path) -> Pool:
        """One native list per QuestionID, in file order; every sentence of the split is the corpus."""
        [path] = self.source_files(root, split)
        require_files([path])
        builder = PoolBuilder(self.name, split, path, native=True)
        with open_text(path, FIX) as handle:
            _parse(tsv_rows(handle, path, HEADER), path, builder)
        return builder.build()


def _parse(rows: Iterator[tuple[int, list[str]]], path: Path, builder: PoolBuilder) -> None:
    """Add each question's block of rows; a question whose rows are split raises (naming the line)."""
    first_line: dict[str, int] = {}
    qid: str | None = None
    question = ""
    judged: dict[int, int] = {}
    for line, row in rows:
        _check_row(row, line, path)
        if row[QID] != qid:
            if row[QID] in first_line:
                raise line_error(
                    path,
                    line,
                    f"QuestionID {row[QID]} reappears (first seen on line {first_line[row[QID]]}); "
                    "put all rows of a question together",
                )
            if qid is not None:
                builder.query(qid, [question], judged)
            qid, question, judged = row[QID], row[QUESTION], {}
            first_line[qid] = line
        judged[builder.candidate(row[CID], row[SENTENCE])] = LABELS[row[LABEL]]
    if qid is None:
        raise RankuqError(f"{path}: no rows after the header; {FIX}")
    builder.query(qid, [question], judged)


def _check_row(row: list[str], line: int, path: Path) -> None:
    if len(row) != len(HEADER):
        raise line_error(
            path,
            line,
            f"{len(row)} tab-separated fields, expected {len(HEADER)} ({' '.join(HEADER)}); "
            "fix the line (a stray tab or line break inside a field?)",
        )
    for index in (QID, QUESTION, CID, SENTENCE):
        require_text(path, line, HEADER[index], row[index])
    if row[LABEL] not in LABELS:
        raise line_error(path, line, f"Label is '{row[LABEL]}', expected 0 or 1")
