"""SemEval-2016 Task 3 subtask A (Nakov et al., 2016): ranking the comments of Qatar Living threads.

Native lists: one per thread, its comments in file order. The query is the thread's question
(``RelQSubject`` and ``RelQBody`` as one turn), candidates are its ``RelComment``s. Threads marked
``SubtaskA_Skip_Because_Same_As_RelQuestion_ID`` repeat another thread and are skipped, as are
threads with no comment (one in the 2015 file): they give no list. The files are read with expat,
a real XML parser, so errors name the line.

Splits (the data README's suggestion; the official test file and train part 1 are not here):
- train: train-part2 plus the 2015 file (already mapped to the 2016 labels by the organisers),
  less the dev threads;
- dev: the threads of those two files whose original question (``Q268`` of ``Q268_R16``; the
  whole id in the 2015 file) has a CRC-32 divisible by 5: a fixed fifth, by original question so
  that no question's related threads sit on both sides (111 threads);
- test: the 2016 dev-subtaskA file (244 threads, double-checked annotations).

Two tasks: ``semeval`` labels Good 1 and PotentiallyUseful and Bad 0, as the official scorer
counts them; ``semeval_graded`` labels Good 2, PotentiallyUseful 1, Bad 0.
"""

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar
from xml.parsers import expat

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, Task, require_files
from rankuq.tasks.files import line_error
from rankuq.tasks.pool import Pool, PoolBuilder

FOLDER = "semeval2016"
TRAIN_FILES = (
    f"{FOLDER}/SemEval2016-Task3-CQA-QL-train-part2.xml",
    f"{FOLDER}/SemEval2015-Task3-CQA-QL-dev-reformatted-excluding-2016-questions-cleansed.xml",
)
TEST_FILE = f"{FOLDER}/SemEval2016-Task3-CQA-QL-dev-subtaskA.xml"
SKIP = "SubtaskA_Skip_Because_Same_As_RelQuestion_ID"
RELEVANCE = "RELC_RELEVANCE2RELQ"
BINARY = {"Good": 1, "PotentiallyUseful": 0, "Bad": 0}
GRADED = {"Good": 2, "PotentiallyUseful": 1, "Bad": 0}
DEV_MODULUS = 5  # dev = original questions whose CRC-32 is divisible by it
FIX = "restore the original SemEval-2016 Task 3 file"
TEXTS = ("RelQSubject", "RelQBody", "RelCText")  # elements whose character data is kept


@dataclass
class Thread:
    """One ``<Thread>``: where it starts, its question and its (comment id, text, relevance) list."""

    line: int
    skip: bool
    qid: str = ""
    subject: str = ""
    body: str = ""
    comments: list[tuple[str, str, str]] = field(default_factory=list)


@REGISTRY.register
class SemEval(Task):
    """SemEval-2016 Task 3 subtask A threads ranked over their comments (native lists)."""

    name = "semeval"
    description = "SemEval-2016 Task 3A: Qatar Living threads ranked over their comments; Good relevant"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        "train": TRAIN_FILES,
        "dev": TRAIN_FILES,
        "test": (TEST_FILE,),
    }
    native_splits = ("train", "dev", "test")
    labels: ClassVar[dict[str, int]] = BINARY

    def pool(self, split: str, root: Path) -> Pool:
        paths = self.source_files(root, split)
        require_files(paths)
        builder = PoolBuilder(self.name, split, paths[0], native=True)
        for path in paths:
            for thread in read_threads(path, self.labels):
                if thread.skip or not thread.comments:
                    continue
                if split != "test" and (split == "dev") != in_dev(thread.qid):
                    continue
                judged = {
                    builder.candidate(cid, text): self.labels[relevance]
                    for cid, text, relevance in thread.comments
                }
                question = f"{thread.subject} {thread.body}".strip()
                builder.query(thread.qid, [question], judged)
        return builder.build()


@REGISTRY.register
class SemEvalGraded(SemEval):
    """``semeval`` with graded labels: Good 2, PotentiallyUseful 1, Bad 0."""

    name = "semeval_graded"
    description = "SemEval-2016 Task 3A, graded: Good 2, PotentiallyUseful 1, Bad 0"
    labels = GRADED


def in_dev(qid: str) -> bool:
    """Whether a training thread belongs to the fixed dev part (by its original question)."""
    original = qid.partition("_R")[0]
    return zlib.crc32(original.encode()) % DEV_MODULUS == 0


def read_threads(path: Path, labels: dict[str, int]) -> list[Thread]:
    """Every ``<Thread>`` of ``path`` in file order, checked; a defect raises naming the line."""
    reader = _Reader(path, labels)
    try:
        with path.open("rb") as handle:
            reader.parser.ParseFile(handle)
    except expat.ExpatError as exc:
        message = expat.errors.messages[exc.code]
        raise line_error(path, exc.lineno, f"not well-formed XML ({message}); {FIX}") from None
    except OSError as exc:
        raise RankuqError(f"{path}: not readable ({exc}); {FIX}") from exc
    if not reader.threads:
        raise RankuqError(f"{path}: no <Thread> elements; {FIX}")
    return reader.threads


class _Reader:
    """expat callbacks that collect threads; character data of ``TEXTS`` elements only."""

    def __init__(self, path: Path, labels: dict[str, int]) -> None:
        self.path, self.labels = path, labels
        self.parser = expat.ParserCreate()
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.data
        self.threads: list[Thread] = []
        self.thread: Thread | None = None
        self.text: list[str] | None = None  # character data of the open TEXTS element
        self.seen: dict[str, int] = {}  # comment id → line

    def error(self, message: str) -> RankuqError:
        return line_error(self.path, self.parser.CurrentLineNumber, message)

    def attribute(self, tag: str, attrs: dict[str, str], name: str) -> str:
        value = attrs.get(name, "").strip()
        if not value:
            raise self.error(f"<{tag}> without {name}; {FIX}")
        return value

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag == "Thread":
            self.thread = Thread(self.parser.CurrentLineNumber, skip=bool(attrs.get(SKIP)))
            self.threads.append(self.thread)
        elif self.thread is None:
            return  # the original question of train-part2 (subtask B) and the root
        elif tag == "RelQuestion":
            self.thread.qid = self.attribute(tag, attrs, "RELQ_ID")
        elif tag == "RelComment":
            cid = self.attribute(tag, attrs, "RELC_ID")
            relevance = self.attribute(tag, attrs, RELEVANCE)
            if relevance not in self.labels:
                raise self.error(f"{RELEVANCE} is '{relevance}', expected one of {', '.join(self.labels)}")
            if cid in self.seen:
                raise self.error(f"comment id {cid} appears twice (first on line {self.seen[cid]}); keep one")
            self.seen[cid] = self.parser.CurrentLineNumber
            self.thread.comments.append((cid, "", relevance))
        if tag in TEXTS:
            self.text = []

    def data(self, text: str) -> None:
        if self.text is not None:
            self.text.append(text)

    def end(self, tag: str) -> None:
        if self.thread is None or tag not in (*TEXTS, "Thread"):
            return
        if tag == "Thread":
            if not self.thread.qid:
                raise self.error(f"<Thread> starting on line {self.thread.line} has no <RelQuestion>; {FIX}")
            if not self.thread.subject and not self.thread.body:
                raise self.error(f"thread {self.thread.qid} has an empty question; {FIX}")
            self.thread = None
            return
        text = " ".join("".join(self.text or []).split())
        self.text = None
        if tag == "RelQSubject":
            self.thread.subject = text
        elif tag == "RelQBody":
            self.thread.body = text
        elif self.thread.comments:
            cid, _, relevance = self.thread.comments[-1]
            if not text and not self.thread.skip:
                raise self.error(f"comment {cid} has an empty <RelCText>; fill it in or remove the comment")
            self.thread.comments[-1] = (cid, text, relevance)
