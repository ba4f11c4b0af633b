"""UDC v1 CSV and Ubuntu DSTC7/8 JSON on fixture files in the released formats."""

import csv
import json
from pathlib import Path

import pytest

from rankuq.errors import RankuqError
from rankuq.tasks.lists import build_lists
from rankuq.tasks.udc import EVAL_HEADER, TRAIN_HEADER, Udc, UdcDstc8, split_turns

CONTEXT = "how do i mount a drive __eou__ __eot__ which drive ? __eou__ usb __eou__ __eot__"


def write_csv(root: Path, name: str, header: tuple[str, ...], rows: list[list[str]]) -> Path:
    path = root / "udc" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def eval_row(context: str = CONTEXT, true: str = "sudo mount /dev/sdb1 /mnt") -> list[str]:
    return [context, true, *(f"distractor {i} __eou__" for i in range(9))]


def test_split_turns() -> None:
    assert split_turns(CONTEXT) == ["how do i mount a drive", "which drive ? usb"]
    assert split_turns(" __eou__ __eot__ ") == []


def test_valid_native_lists_of_ten(tmp_path: Path) -> None:
    write_csv(tmp_path, "valid.csv", EVAL_HEADER, [eval_row(), eval_row("hi __eou__ __eot__", "hello")])
    pool = Udc().pool("dev", tmp_path)
    assert pool.native and len(pool.qids) == 2
    assert pool.contexts[0] == ["how do i mount a drive", "which drive ? usb"]
    assert [label for _, label in pool.judged[0]] == [1] + [0] * 9
    assert len(pool.cids) == 11  # the distractors are shared by both lists
    assert build_lists(pool).num_rows == 20


def test_train_keeps_true_pairs_and_samples_negatives(tmp_path: Path) -> None:
    rows = [
        [CONTEXT, "sudo mount it", "1.0"],
        ["hi __eou__ __eot__", "random reply", "0.0"],
        ["ok __eot__", "yes", "1"],
    ]
    write_csv(tmp_path, "train.csv", TRAIN_HEADER, rows)
    pool = Udc().pool("train", tmp_path)
    assert not pool.native and len(pool.qids) == 2 and len(pool.cids) == 3
    assert Udc().default_strategy("train") == "bm25"
    with pytest.raises(RankuqError, match=r"udc/train has no native candidate lists"):
        build_lists(pool, "native")
    assert build_lists(pool, "random", n=2).num_rows == 4


@pytest.mark.parametrize(
    ("name", "header", "rows", "message"),
    [
        ("train.csv", ("Context", "Response", "Label"), [], r"train\.csv: line 1: header is"),
        ("train.csv", TRAIN_HEADER, [[CONTEXT, "reply", "maybe"]], r"train\.csv: line 2: Label is 'maybe'"),
        ("train.csv", TRAIN_HEADER, [[CONTEXT, "reply"]], r"train\.csv: line 2: 2 fields, expected 3"),
        (
            "train.csv",
            TRAIN_HEADER,
            [["__eou__ __eot__", "reply", "1"]],
            r"train\.csv: line 2: empty Context",
        ),
        ("valid.csv", EVAL_HEADER, [eval_row(true=" ")], r"valid\.csv: line 2: empty Ground Truth Utterance"),
    ],
)
def test_bad_csv(
    tmp_path: Path, name: str, header: tuple[str, ...], rows: list[list[str]], message: str
) -> None:
    write_csv(tmp_path, name, header, rows)
    with pytest.raises(RankuqError, match=message):
        Udc().pool("train" if name == "train.csv" else "dev", tmp_path)


def example(eid: str, correct: list[str], options: list[str]) -> dict:
    return {
        "example-id": eid,
        "messages-so-far": [
            {"speaker": "p1", "utterance": "my wifi drops"},
            {"speaker": "p2", "utterance": "driver?"},
        ],
        "options-for-correct-answers": [{"candidate-id": c, "utterance": f"text {c}"} for c in correct],
        "options-for-next": [{"candidate-id": o, "utterance": f"text {o}"} for o in options],
    }


def write_json(root: Path, split: str, data: object) -> None:
    path = root / "udc_dstc8" / f"{split}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_dstc_native_lists_and_nota(tmp_path: Path) -> None:
    options = [f"c{i}" for i in range(5)]
    examples = [example("e1", ["c2"], options), example("e2", ["x9"], options), example("e3", [], options)]
    write_json(tmp_path, "dev", examples)
    pool = UdcDstc8().pool("dev", tmp_path)
    assert pool.contexts[0] == ["my wifi drops", "driver?"]
    assert [label for _, label in pool.judged[0]] == [0, 0, 1, 0, 0]
    assert [label for _, label in pool.judged[1]] == [0] * 5 + [1]  # the answer is appended
    table = build_lists(pool)
    assert table.filter(table.column("nota")).column("qid").unique().to_pylist() == ["e3"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"not": "a list"}, r"dev\.json: expected a JSON list of examples, got dict"),
        ([{"example-id": "e1"}], r"dev\.json: example 0: missing or malformed 'messages-so-far'"),
        ([example("e1", ["c0"], ["c0"]) | {"messages-so-far": []}], r"example 0: empty context"),
    ],
)
def test_bad_json(tmp_path: Path, data: object, message: str) -> None:
    write_json(tmp_path, "dev", data)
    with pytest.raises(RankuqError, match=message):
        UdcDstc8().pool("dev", tmp_path)


def test_not_json(tmp_path: Path) -> None:
    path = tmp_path / "udc_dstc8" / "test.json"
    path.parent.mkdir()
    path.write_text("[{")
    with pytest.raises(RankuqError, match=r"test\.json: not valid JSON"):
        UdcDstc8().pool("test", tmp_path)
