"""The trecqa tasks: the data README's counts on the real files, raw and clean, and malformed files."""

import json
import re
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
import pytest

from rankuq import tasks
from rankuq.contract import CANDIDATE_SCHEMA, read_shards
from rankuq.errors import RankuqError
from rankuq.tasks.base import SPLITS
from rankuq.tasks.pool import Pool
from rankuq.tasks.shards import build_shards
from rankuq.tasks.trecqa import TrecQA, TrecQAClean

# split: (questions, with a positive and a negative, positive sentences, negative sentences)
README = {"train": (94, 78, 348, 4370), "dev": (82, 65, 222, 926), "test": (100, 68, 284, 1233)}


def both(judged: list[tuple[int, int]]) -> bool:
    return {label for _, label in judged} == {0, 1}


@pytest.fixture(scope="module")
def raw() -> dict[str, Pool]:
    return {split: TrecQA().pool(split, tasks.data_root()) for split in SPLITS}


@pytest.fixture(scope="module")
def clean() -> dict[str, Pool]:
    return {split: TrecQAClean().pool(split, tasks.data_root()) for split in SPLITS}


def test_registered_with_native_lists() -> None:
    assert tasks.get("trecqa") is TrecQA and tasks.get("trecqa_clean") is TrecQAClean
    assert TrecQA.files == ("trecqa/TRAIN.xml", "trecqa/DEV.xml", "trecqa/TEST.xml")
    assert TrecQA().default_strategy("test") == "native"


@pytest.mark.parametrize("split", SPLITS)
def test_raw_counts_match_the_readme(raw: dict[str, Pool], split: str) -> None:
    pool = raw[split]
    questions, with_both, positives, negatives = README[split]
    labels = Counter(label for judged in pool.judged for _, label in judged)
    assert len(pool.qids) == len(set(pool.qids)) == questions
    assert sum(map(both, pool.judged)) == with_both
    assert (labels[1], labels[0]) == (positives, negatives)
    assert len(pool.cids) == positives + negatives  # one corpus row per sentence


@pytest.mark.parametrize("split", SPLITS)
def test_clean_keeps_dev_and_test_questions_with_a_positive_and_a_negative(
    raw: dict[str, Pool], clean: dict[str, Pool], split: str
) -> None:
    if split == "train":
        assert clean[split].qids == raw[split].qids
        return
    assert len(clean[split].qids) == README[split][1]
    assert all(map(both, clean[split].judged))
    kept = [q for q, judged in zip(raw[split].qids, raw[split].judged, strict=True) if both(judged)]
    assert clean[split].qids == kept


def test_real_text_is_the_token_line_joined(raw: dict[str, Pool]) -> None:
    pool = raw["test"]
    assert pool.qids[0] == "32.1"
    assert pool.contexts[0] == ["What do practitioners of Wicca worship ?"]
    assert pool.cids[0] == "32.1-0"
    assert (
        pool.texts[0]
        == "An estimated 50,000 Americans practice Wicca , a form of polytheistic nature worship ."
    )
    assert pool.judged[0][:3] == [(0, 1), (1, 1), (2, 0)]


def test_clean_test_builds_native_shards(tmp_path: Path) -> None:
    path = build_shards("trecqa_clean", "test", root=tasks.data_root(), cache_dir=tmp_path)
    table = read_shards(path)
    assert table.schema == CANDIDATE_SCHEMA
    assert table.num_rows == 1442  # the clean test set's sentences, as the literature counts them
    assert len(pc.unique(table.column("qid"))) == 68
    assert set(table.column("ns").to_pylist()) == {"native"} and not any(table.column("nota").to_pylist())
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["pool_queries"] == manifest["queries"] == 68


def test_raw_test_lists_leave_out_the_questions_without_sentences(tmp_path: Path) -> None:
    path = build_shards("trecqa", "test", root=tasks.data_root(), cache_dir=tmp_path)
    manifest = json.loads((path / "manifest.json").read_text())
    assert (manifest["pool_queries"], manifest["queries"], manifest["rows"]) == (100, 95, 1517)
    assert manifest["nota_queries"] == 6  # only negatives; 21 more have only positives


QUESTION = ["<question>", "Who\twrote\tit\t?", "WP\tVBD\tPRP\t.", "</question>"]
POSITIVE = ["<positive>", "Tom\twrote\tit", "NNP\tVBD\tPRP", "Tom", "</positive>"]
NEGATIVE = ["<negative>", "It\trained", "PRP\tVBD", "</negative>"]
GOOD = ["<QApairs id='1'>", *QUESTION, *POSITIVE, *NEGATIVE, "</QApairs>"]


def write(root: Path, lines: list[str]) -> None:
    (root / "trecqa").mkdir(exist_ok=True)
    (root / "trecqa" / "DEV.xml").write_text("\n".join(lines) + "\n")


def test_fixture(tmp_path: Path) -> None:
    write(tmp_path, [*GOOD, "<QApairs id='2'>", *QUESTION, *NEGATIVE, "</QApairs>"])
    table = TrecQA().load("dev", tmp_path)
    assert table.column("qid").to_pylist() == ["1", "1", "2"]
    assert table.column("cid").to_pylist() == ["1-0", "1-1", "2-0"]
    assert table.column("text").to_pylist() == ["Tom wrote it", "It rained", "It rained"]
    assert table.column("label").to_pylist() == [1, 0, 0]
    assert table.column("nota").to_pylist() == [False, False, True]
    assert TrecQAClean().pool("dev", tmp_path).qids == ["1"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (GOOD[:-1], r"line 14: file ends inside <QApairs id='1'>"),
        (GOOD[:-2], r"line 13: file ends inside <negative>"),
        ([*GOOD, *GOOD], r"line 16: question id 1 appears twice \(first on line 1\)"),
        (["<QApairs id='1'>", *POSITIVE, *QUESTION, "</QApairs>"], r"line 2: <positive> out of place"),
        (["<QApairs id='1'>", *QUESTION, *QUESTION, "</QApairs>"], r"line 6: <question> out of place"),
        (["<QApairs id='1'>", "<question>", "</question>", "</QApairs>"], r"line 3: empty <question> text"),
        (["<QApairs id='1'>", "</QApairs>"], r"line 1: question 1 has no <question> block"),
        (["<QApairs id='1'>", "<question>", "a", "<negative>"], r"line 4: <negative> inside <question>"),
        (["<QApairs id=1>", *QUESTION], r"line 1: expected <QApairs id='…'>"),
        (["<QApairs id='1'>", *QUESTION, "junk", "</QApairs>"], r"line 6: unexpected 'junk' in question 1"),
        ([""], r"no <QApairs> blocks"),
    ],
    ids=[
        "unclosed-question",
        "unclosed-block",
        "duplicate-id",
        "positive-first",
        "two-questions",
        "empty-text",
        "empty-block",
        "nested",
        "bad-open",
        "junk",
        "empty-file",
    ],
)
def test_bad_file(tmp_path: Path, lines: list[str], message: str) -> None:
    write(tmp_path, lines)
    with pytest.raises(RankuqError, match=re.escape(str(tmp_path / "trecqa" / "DEV.xml")) + ": " + message):
        TrecQA().pool("dev", tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"data file not found: .*trecqa/TEST\.xml"):
        TrecQAClean().pool("test", tmp_path)
