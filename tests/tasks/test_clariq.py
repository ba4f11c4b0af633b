"""The clariq task: real topics, bank and clarification_need; every error path on small fixtures."""

import re
from pathlib import Path

import pytest

from rankuq import tasks
from rankuq.errors import RankuqError
from rankuq.tasks.base import SPLITS
from rankuq.tasks.clariq import BANK_HEADER, HEADER, ClariQ
from rankuq.tasks.pool import Pool

TOPICS = {"train": 187, "dev": 50, "test": 61}  # from the data README
BANK_LINES = ["\t".join(BANK_HEADER), "Q00001\t", "Q00002\tdo you mean the animal?", "Q00003\tfor kids?"]


def row(topic: str, request: str, need: str, question: str) -> str:
    return "\t".join([topic, request, "desc", need, "F1", "facet", question, "q text", "answer"])


GOOD = [
    "\t".join(HEADER),
    row("1", "tell me about jaguar", "2", "Q00002"),
    row("2", "kids books", "3", "Q00003"),
]


def write(root: Path, lines: list[str], bank: list[str] = BANK_LINES, split_file: str = "dev.tsv") -> None:
    folder = root / "clariq"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / split_file).write_text("\n".join(lines) + "\n")
    (folder / "question_bank.tsv").write_text("\n".join(bank) + "\n")


@pytest.fixture(scope="module")
def real() -> dict[str, Pool]:
    return {split: ClariQ().pool(split, tasks.data_root()) for split in SPLITS}


def test_registered_without_native_lists() -> None:
    assert tasks.get("clariq") is ClariQ
    assert ClariQ.native_splits == ()
    assert ClariQ().default_strategy("train") == "bm25"
    assert "clariq/question_bank.tsv" in ClariQ.files


@pytest.mark.parametrize("split", SPLITS)
def test_real_topics_and_bank(real: dict[str, Pool], split: str) -> None:
    pool = real[split]
    assert len(pool.qids) == TOPICS[split]
    assert len(pool.cids) == 3940 and "Q00001" not in pool.cids  # the empty question is no candidate
    assert all(judged and all(label == 1 for _, label in judged) for judged in pool.judged)
    assert set(pool.extras["clarification_need"]) <= {1, 2, 3, 4}
    assert not pool.native


def test_real_two_phrasings_keep_the_first(real: dict[str, Pool]) -> None:
    pool = real["test"]
    assert pool.contexts[pool.qids.index("260")] == ["Tell me about american revolution."]


def test_real_splits_share_no_topic_or_request(real: dict[str, Pool]) -> None:
    for one, other in [("train", "dev"), ("train", "test"), ("dev", "test")]:
        assert not set(real[one].qids) & set(real[other].qids)
        assert not {c[0] for c in real[one].contexts} & {c[0] for c in real[other].contexts}


def test_fixture_pool(tmp_path: Path) -> None:
    write(tmp_path, [*GOOD, row("1", "tell me about jaguar", "2", "Q00001")])
    pool = ClariQ().pool("dev", tmp_path)
    assert pool.qids == ["1", "2"]
    assert pool.contexts == [["tell me about jaguar"], ["kids books"]]
    assert pool.cids == ["Q00002", "Q00003"]
    assert pool.judged == [[(0, 1)], [(1, 1)]]  # Q00001 (empty) is not a relevant candidate
    assert pool.extras == {"clarification_need": [2, 3]}


@pytest.mark.parametrize(
    ("lines", "bank", "message"),
    [
        ([GOOD[0].replace("question_id", "qid"), *GOOD[1:]], BANK_LINES, r"dev\.tsv: line 1: header is"),
        ([*GOOD, "3\tshort row"], BANK_LINES, r"dev\.tsv: line 4: 2 tab-separated fields, expected 9"),
        ([GOOD[0], row("1", "  ", "2", "Q00002")], BANK_LINES, r"dev\.tsv: line 2: empty initial_request"),
        ([GOOD[0], row("1", "jaguar", "5", "Q00002")], BANK_LINES, r"line 2: clarification_need is '5'"),
        (
            [*GOOD, row("1", "jaguar", "4", "Q00003")],
            BANK_LINES,
            r"line 4: topic 1 has two clarification_need",
        ),
        ([GOOD[0], row("1", "jaguar", "2", "Q09999")], BANK_LINES, r"line 2: question_id Q09999 is not in"),
        (
            GOOD,
            [*BANK_LINES, "Q00002\tagain"],
            r"question_bank\.tsv: line 5: question_id Q00002 appears twice",
        ),
        (GOOD, ["id\tquestion"], r"question_bank\.tsv: line 1: header is"),
        (GOOD[:1], BANK_LINES, r"dev\.tsv: no queries for split dev"),
    ],
    ids=[
        "header",
        "short",
        "empty-request",
        "need",
        "two-needs",
        "unknown-question",
        "bank-dup",
        "bank-header",
        "empty",
    ],
)
def test_bad_files(tmp_path: Path, lines: list[str], bank: list[str], message: str) -> None:
    write(tmp_path, lines, bank)
    with pytest.raises(RankuqError, match=message):
        ClariQ().pool("dev", tmp_path)


def test_missing_bank(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    (tmp_path / "clariq" / "question_bank.tsv").unlink()
    with pytest.raises(RankuqError, match=re.escape("question_bank.tsv") + ".*RANKUQ_DATA"):
        ClariQ().pool("dev", tmp_path)


def test_test_split_reads_test_with_labels(tmp_path: Path) -> None:
    write(tmp_path, GOOD, split_file="test_with_labels.tsv")
    assert ClariQ().pool("test", tmp_path).qids == ["1", "2"]
