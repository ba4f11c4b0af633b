"""WikiQA (Yang, Yih & Meek, 2015): answer-sentence selection with real unanswerable questions.

One candidate list per question: the sentences of one Wikipedia page, in file order. Questions
with no correct sentence are kept and flagged ``nota`` (ranking metrics usually skip them).
"""

import csv
import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np
import pyarrow as pa

from bench.errors import RankuqError
from tasks.base import REGISTRY, SPLITS, Task, require_files
from tasks.contract import CANDIDATE_SCHEMA, validate_candidates

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
NS = "page"  # negatives are the other sentences of the question's Wikipedia page


@dataclass
class _Columns:
    """Parsed rows of one file, column by column, plus where each question started."""

    qid: list[str] = field(default_factory=list)
    question: list[str] = field(default_factory=list)
    cid: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    label: list[int] = field(default_factory=list)
    first_line: dict[str, int] = field(default_factory=dict)


@REGISTRY.register("wikiqa")
class WikiQA(Task):
    """WikiQA questions ranked over their page's sentences (ns = "page")."""

    name = "wikiqa"
    description = "WikiQA answer-sentence selection; unanswerable questions flagged nota"
    files = tuple(f"wikiqa/WikiQA-{split}.tsv.gz" for split in SPLITS)

    def source_files(self, root: Path, split: str | None = None) -> list[Path]:
        """One file per split, so a split's cache does not depend on the others."""
        if split is None:
            return super().source_files(root)
        self.check_split(split)
        return [root / f"wikiqa/WikiQA-{split}.tsv.gz"]

    def load(self, split: str, root: Path) -> pa.Table:
        """Candidate lists of ``split`` (contract 1), one list per QuestionID in file order."""
        [path] = self.source_files(root, split)
        require_files([path])
        columns = _read(path)
        return validate_candidates(_to_table(columns, split), str(path))


def _read(path: Path) -> _Columns:
    """Parse a gzip TSV file, turning decoding failures into one clear error."""
    try:
        with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
            return _parse(handle, path)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error, csv.Error) as exc:
        raise RankuqError(
            f"{path}: not a readable gzip UTF-8 TSV ({exc}); restore the original WikiQA file"
        ) from exc


def _parse(handle: TextIO, path: Path) -> _Columns:
    """Check the header, then every row; errors name the file line (the header is line 1)."""
    # QUOTE_NONE: sentences hold literal '"'. With newline="" csv eats the CRLF line ends,
    # so no '\r' reaches Label.
    reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader, None)
    if header is None or tuple(header) != HEADER:
        raise RankuqError(
            f"{path}: line 1: header is {header}, expected the tab-separated columns "
            f"{' '.join(HEADER)}; use the original WikiQA TSV file"
        )
    columns = _Columns()
    for row in reader:
        if row:  # tolerate blank lines, e.g. one an editor added at the end
            _add_row(columns, row, reader.line_num, path)
    if not columns.qid:
        raise RankuqError(f"{path}: no rows after the header; restore the original WikiQA file")
    return columns


def _add_row(columns: _Columns, row: list[str], line: int, path: Path) -> None:
    """Validate one data row and append it; a question's rows must be contiguous."""
    if len(row) != len(HEADER):
        raise _line_error(
            path,
            line,
            f"{len(row)} tab-separated fields, expected {len(HEADER)} ({' '.join(HEADER)}); "
            "fix the line (a stray tab or line break inside a field?)",
        )
    for index in (QID, QUESTION, CID, SENTENCE):
        if not row[index].strip():
            raise _line_error(path, line, f"empty {HEADER[index]}; fill it in or remove the line")
    if row[LABEL] not in LABELS:
        raise _line_error(path, line, f"Label is {row[LABEL]!r}, expected 0 or 1; fix the line")
    qid = row[QID]
    if not columns.qid or qid != columns.qid[-1]:
        if qid in columns.first_line:
            raise _line_error(
                path,
                line,
                f"QuestionID {qid} reappears (first seen on line {columns.first_line[qid]}); "
                "put all rows of a question together",
            )
        columns.first_line[qid] = line
    columns.qid.append(qid)
    columns.question.append(row[QUESTION])
    columns.cid.append(row[CID])
    columns.text.append(row[SENTENCE])
    columns.label.append(LABELS[row[LABEL]])


def _line_error(path: Path, line: int, message: str) -> RankuqError:
    return RankuqError(f"{path}: line {line}: {message}")


def _to_table(columns: _Columns, split: str) -> pa.Table:
    """Arrow columns of contract 1; nota marks every row of a question with no positive."""
    qid = np.asarray(columns.qid, dtype=object)
    label = np.asarray(columns.label, dtype=np.int8)
    # Runs of equal qid are the questions (contiguity was checked while parsing).
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    answered = np.maximum.reduceat(label, starts) > 0
    nota = np.repeat(~answered, np.diff(np.r_[starts, qid.size]))
    n = qid.size
    context = pa.ListArray.from_arrays(
        pa.array(np.arange(n + 1, dtype=np.int32)), pa.array(columns.question, pa.string())
    )
    return pa.table(
        {
            "qid": pa.array(columns.qid, pa.string()),
            "context": context,
            "cid": pa.array(columns.cid, pa.string()),
            "text": pa.array(columns.text, pa.string()),
            "label": pa.array(label),
            "task": pa.array([WikiQA.name] * n, pa.string()),
            "split": pa.array([split] * n, pa.string()),
            "ns": pa.array([NS] * n, pa.string()),
            "nota": pa.array(nota),
        },
        schema=CANDIDATE_SCHEMA,
    )
