"""Ubuntu Dialogue Corpus: v1 CSV files (Lowe et al., 2015; Ye et al., ICASSP 2023) and DSTC7/DSTC8
JSON (Penha & Hauff, 2021).

``udc`` reads ``udc/train.csv`` (``Context,Utterance,Label``: a true or a random response per row)
and ``udc/valid.csv`` / ``udc/test.csv`` (``Context,Ground Truth Utterance,Distractor_0…8``: native
lists of 10). Turns end in ``__eot__``, utterances in ``__eou__``. Training rows with Label 0 are
random pairs and are left out: the train split has no native lists, strategies sample its negatives.

``udc_dstc8`` reads the NOESIS (DSTC7 track 1 / DSTC8 track 2) Ubuntu JSON: a list of examples with
``messages-so-far``, ``options-for-next`` (the native list, 100 candidates) and
``options-for-correct-answers`` (appended when not among the options; an empty one is a NOTA
example). Test files released without answers need them merged in first.
"""

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from rankuq.errors import RankuqError
from rankuq.tasks.base import REGISTRY, SPLITS, Task, require_files
from rankuq.tasks.files import line_error, open_text, require_text
from rankuq.tasks.pool import Pool, PoolBuilder
from rankuq.tasks.response_tsv import text_cid

TRAIN_HEADER = ("Context", "Utterance", "Label")
EVAL_HEADER = ("Context", "Ground Truth Utterance", *(f"Distractor_{i}" for i in range(9)))
TRAIN_LABELS = {"1": 1, "1.0": 1, "0": 0, "0.0": 0}


def split_turns(context: str) -> list[str]:
    """UDC context → turns: split at ``__eot__``, drop the ``__eou__`` markers, skip blank turns."""
    turns = (" ".join(turn.replace("__eou__", " ").split()) for turn in context.split("__eot__"))
    return [turn for turn in turns if turn]


@REGISTRY.register
class Udc(Task):
    """UDC v1: train pairs sampled by a strategy, valid/test native lists of 10."""

    name = "udc"
    description = "Ubuntu Dialogue Corpus v1 (Lowe et al. 2015): native lists of 10 on valid/test"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        "train": ("udc/train.csv",),
        "dev": ("udc/valid.csv",),
        "test": ("udc/test.csv",),
    }
    native_splits = ("dev", "test")

    def pool(self, split: str, root: Path) -> Pool:
        [path] = self.source_files(root, split)
        require_files([path])
        builder = PoolBuilder(self.name, split, path, native=split in self.native_splits)
        header = EVAL_HEADER if builder.native else TRAIN_HEADER
        with open_text(path, f"use the UDC v1 {path.name} as released") as handle:
            for line, row in _csv_rows(handle, path, header):
                turns = split_turns(row[0])
                if not turns:
                    raise line_error(path, line, "empty Context; fill it in or remove the line")
                add = _eval_list if builder.native else _train_pair
                judged = add(row, header, (line, path), builder)
                if judged:
                    builder.query(f"udc-{split}-{line}", turns, judged)
        return builder.build()


def _train_pair(
    row: list[str], header: tuple[str, ...], where: tuple[int, Path], builder: PoolBuilder
) -> dict[int, int]:
    """A true (Label 1) training pair as {row: 1}; a random pair (Label 0) adds only its response."""
    line, path = where
    if row[2] not in TRAIN_LABELS:
        raise line_error(path, line, f"Label is '{row[2]}', expected 1 or 0")
    text = require_text(path, line, header[1], row[1])
    row_id = builder.candidate(text_cid(text), text)
    return {row_id: 1} if TRAIN_LABELS[row[2]] else {}


def _eval_list(
    row: list[str], header: tuple[str, ...], where: tuple[int, Path], builder: PoolBuilder
) -> dict[int, int]:
    """The ground truth (label 1) and the 9 distractors of a valid/test row."""
    judged: dict[int, int] = {}
    for column in range(1, len(header)):
        text = require_text(path=where[1], line=where[0], name=header[column], value=row[column])
        judged.setdefault(builder.candidate(text_cid(text), text), int(column == 1))
    return judged


def _csv_rows(handle: Any, path: Path, header: tuple[str, ...]) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of a quoted CSV file whose header must be ``header``."""
    reader = csv.reader(handle)
    first = next(reader, None)
    if first is None or tuple(first) != header:
        raise line_error(path, 1, f"header is {first}, expected {','.join(header)}")
    for row in reader:
        if not row:
            continue
        if len(row) != len(header):
            raise line_error(path, reader.line_num, f"{len(row)} fields, expected {len(header)}")
        yield reader.line_num, row


@REGISTRY.register
class UdcDstc8(Task):
    """Ubuntu NOESIS (DSTC7/DSTC8) JSON: native lists of 100 options."""

    name = "udc_dstc8"
    description = "Ubuntu DSTC7/DSTC8 NOESIS response selection (JSON), 100 native options per context"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        split: (f"udc_dstc8/{split}.json",) for split in SPLITS
    }
    native_splits = SPLITS

    def pool(self, split: str, root: Path) -> Pool:
        [path] = self.source_files(root, split)
        require_files([path])
        with open_text(path, "use the NOESIS JSON file as released") as handle:
            try:
                examples = json.load(handle)
            except json.JSONDecodeError as exc:
                raise RankuqError(f"{path}: not valid JSON ({exc}); use the file as released") from exc
        if not isinstance(examples, list):
            raise RankuqError(f"{path}: expected a JSON list of examples, got {type(examples).__name__}")
        builder = PoolBuilder(self.name, split, path, native=True)
        for index, example in enumerate(examples):
            _add_example(example, f"{path}: example {index}", builder)
        return builder.build()


def _add_example(example: Any, where: str, builder: PoolBuilder) -> None:
    """One NOESIS example: its turns, options (label 1 for the correct ones) and id."""
    try:
        qid = str(example["example-id"])
        turns = [str(message["utterance"]).strip() for message in example["messages-so-far"]]
        options = _options(example["options-for-next"])
        correct = _options(example["options-for-correct-answers"])
    except (KeyError, TypeError) as exc:
        raise RankuqError(
            f"{where}: missing or malformed {exc}; each example needs example-id, messages-so-far, "
            "options-for-next and options-for-correct-answers (merge a test set's answers in first)"
        ) from None
    turns = [turn for turn in turns if turn]
    if not turns:
        raise RankuqError(f"{where}: empty context (messages-so-far has no text); fix or drop it")
    offered = dict(options)
    candidates = options + [(cid, text) for cid, text in correct if cid not in offered]
    correct_ids = {cid for cid, _ in correct}
    judged: dict[int, int] = {}
    for cid, text in candidates:
        if text.strip():  # a blank option cannot be ranked
            judged.setdefault(builder.candidate(cid, text), int(cid in correct_ids))
    builder.query(qid, turns, judged)


def _options(options: Any) -> list[tuple[str, str]]:
    """(candidate-id, utterance) pairs of a NOESIS option list."""
    return [(str(option["candidate-id"]), str(option["utterance"])) for option in options]
