"""TrecQA (Wang, Smith & Mitamura, 2007; Yao et al., 2013): answer-sentence selection on news.

The jacana release: ``TRAIN.xml``, ``DEV.xml``, ``TEST.xml`` (only the small hand-checked TRAIN).
Native lists: one per question, its ``<positive>`` (label 1) and ``<negative>`` (label 0) sentences
in file order, with ids ``<question id>-<index>``. The files are not well-formed XML (bare ``&``,
no root element), so they are read line by line: ``<QApairs id='…'>`` blocks, each a
``<question>`` then candidate blocks, whose first line is the tab-separated tokens (joined with
spaces here) and whose further lines (POS, dependencies, NER, answer patterns) are ignored.

Two tasks, as the literature reports two test sets:
- ``trecqa``: every question ("raw": 100 test questions). Questions with no positive are flagged
  ``nota``; questions with only positives keep their all-relevant lists. Seven questions (1 train,
  1 dev, 5 test) have no candidate sentence at all: they stay in the pool, so that it holds every
  question, but give no native list (other strategies give them NOTA lists of negatives).
- ``trecqa_clean``: dev and test keep only the questions with a positive and a negative ("clean":
  65 dev, 68 test questions), as Rao, He & Lin (2016) cut them; train is the same as ``trecqa``.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, TextIO

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, SPLITS, Task, require_files
from rankuq.tasks.files import line_error, open_text
from rankuq.tasks.pool import Pool, PoolBuilder

OPEN = re.compile(r"<QApairs id='([^']+)'>$")
LABELS = {"positive": 1, "negative": 0}
FIX = "restore the original jacana TrecQA file"


class Question:
    """One ``<QApairs>`` block: its id, the line it starts on, its text and (text, label) candidates."""

    def __init__(self, qid: str, line: int) -> None:
        self.qid, self.line = qid, line
        self.text: str | None = None
        self.candidates: list[tuple[str, int]] = []

    def clean(self) -> bool:
        """Both a positive and a negative candidate."""
        return {label for _, label in self.candidates} == {0, 1}


@REGISTRY.register
class TrecQA(Task):
    """TrecQA questions ranked over their candidate sentences (native lists), raw test set."""

    name = "trecqa"
    description = "TrecQA answer-sentence selection (news), raw: every question; no-positive ones NOTA"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        split: (f"trecqa/{split.upper()}.xml",) for split in SPLITS
    }
    native_splits = SPLITS
    clean_splits: tuple[str, ...] = ()  # splits cut to the questions with a positive and a negative

    def pool(self, split: str, root: Path) -> Pool:
        """One native list per question, in file order; every sentence of the split is the corpus."""
        [path] = self.source_files(root, split)
        require_files([path])
        builder = PoolBuilder(self.name, split, path, native=True)
        with open_text(path, FIX) as handle:
            for question in read_questions(handle, path):
                if split in self.clean_splits and not question.clean():
                    continue
                judged = {
                    builder.candidate(f"{question.qid}-{index}", text): label
                    for index, (text, label) in enumerate(question.candidates)
                }
                builder.query(question.qid, [question.text or ""], judged)
        return builder.build()


@REGISTRY.register
class TrecQAClean(TrecQA):
    """TrecQA with dev and test cut to the questions that have a positive and a negative."""

    name = "trecqa_clean"
    description = "TrecQA, clean dev/test: only questions with a positive and a negative (68 test)"
    clean_splits = ("dev", "test")


def read_questions(handle: TextIO, path: Path) -> Iterator[Question]:
    """Each ``<QApairs>`` block in file order; any structural defect raises, naming the line."""
    seen: dict[str, int] = {}
    question: Question | None = None
    block: str | None = None  # the open <question>/<positive>/<negative> block
    tokens_due = False  # the next line is the open block's token line
    line = 0
    for line, raw in enumerate(handle, start=1):
        text = raw.rstrip("\r\n")
        if tokens_due and question is not None and block is not None:
            tokens = " ".join(text.split("\t")).strip()
            if not tokens or text.startswith("<"):
                raise line_error(path, line, f"empty <{block}> text; the first line of a block is its tokens")
            if block == "question":
                question.text = tokens
            else:
                question.candidates.append((tokens, LABELS[block]))
            tokens_due = False
        elif block is not None:
            if text == f"</{block}>":
                block = None
            elif text.startswith("<"):
                raise line_error(path, line, f"{text} inside <{block}>; close it with </{block}> first")
        elif question is None:
            match = OPEN.match(text)
            if match is None:
                if text.strip():
                    raise line_error(path, line, f"expected <QApairs id='…'>, found '{text[:40]}'; {FIX}")
                continue
            if match[1] in seen:
                raise line_error(
                    path,
                    line,
                    f"question id {match[1]} appears twice (first on line {seen[match[1]]}); keep one",
                )
            seen[match[1]] = line
            question = Question(match[1], line)
        elif text == "</QApairs>":
            _check_question(question, path)
            yield question
            question = None
        elif text in ("<question>", "<positive>", "<negative>"):
            block, tokens_due = text[1:-1], True
            if (block == "question") != (question.text is None):
                where = "first, once" if block == "question" else "after the <question>"
                raise line_error(path, line, f"<{block}> out of place: <question> comes {where}")
        elif text.strip():
            raise line_error(path, line, f"unexpected '{text[:40]}' in question {question.qid}; {FIX}")
    if question is not None:
        what = f"<{block}>" if block is not None else f"<QApairs id='{question.qid}'>"
        raise line_error(path, line, f"file ends inside {what}; the file is truncated, {FIX}")
    if not seen:
        raise RankuqError(f"{path}: no <QApairs> blocks; {FIX}")


def _check_question(question: Question, path: Path) -> None:
    if question.text is None:
        raise line_error(path, question.line, f"question {question.qid} has no <question> block")
