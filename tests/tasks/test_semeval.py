"""The semeval tasks: the data README's counts on the real files, the split, and malformed files."""

import json
import re
from collections import Counter
from pathlib import Path

import pyarrow.compute as pc
import pytest

from rankuq import tasks
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.tasks.base import SPLITS
from rankuq.tasks.pool import Pool
from rankuq.tasks.semeval import TEST_FILE, TRAIN_FILES, SemEval, SemEvalGraded, in_dev, read_threads
from rankuq.tasks.shards import build_shards


def labels(pool: Pool) -> Counter[int]:
    return Counter(label for judged in pool.judged for _, label in judged)


@pytest.fixture(scope="module")
def graded() -> dict[str, Pool]:
    return {split: SemEvalGraded().pool(split, tasks.data_root()) for split in SPLITS}


def test_registered_with_native_lists() -> None:
    assert tasks.get("semeval") is SemEval and tasks.get("semeval_graded") is SemEvalGraded
    assert SemEval.files == (*TRAIN_FILES, TEST_FILE)
    assert SemEval().default_strategy("train") == "native"


def test_real_files_match_the_readme() -> None:
    """Threads, skips and label counts of each file as the README gives them."""
    root = tasks.data_root()
    part2, older = (read_threads(root / name, SemEval.labels) for name in TRAIN_FILES)
    assert (len(part2), sum(thread.skip for thread in part2)) == (670, 291)
    assert Counter(len(thread.comments) for thread in part2 if not thread.skip) == {10: 379}
    every = Counter(relevance for thread in part2 for _, _, relevance in thread.comments)
    assert every == {"Good": 2483, "PotentiallyUseful": 1159, "Bad": 3058}
    assert len(older) == 291 and not any(thread.skip for thread in older)
    assert max(len(thread.comments) for thread in older) == 32
    assert Counter(r for thread in older for _, _, r in thread.comments) == {
        "Good": 813,
        "PotentiallyUseful": 172,
        "Bad": 544,
    }


def test_real_test_split_is_the_2016_dev_file(graded: dict[str, Pool]) -> None:
    pool = graded["test"]
    assert len(pool.qids) == 244 and {len(judged) for judged in pool.judged} == {10}
    assert labels(pool) == {2: 818, 1: 413, 0: 1209}
    assert pool.qids[0] == "Q268_R16" and pool.contexts[0][0].startswith("Best Bank. Hi ti all QL's;")


def test_real_train_and_dev_split_the_training_threads_by_original_question(graded: dict[str, Pool]) -> None:
    train, dev = graded["train"], graded["dev"]
    # 379 usable part-2 threads plus the 2015 file's 291 less its one thread without comments
    assert len(train.qids) + len(dev.qids) == 379 + 290
    assert len(dev.qids) == 111 and all(map(in_dev, dev.qids)) and not any(map(in_dev, train.qids))
    originals = {split: {qid.partition("_R")[0] for qid in graded[split].qids} for split in ("train", "dev")}
    assert not originals["train"] & originals["dev"]
    usable = [
        t
        for name in TRAIN_FILES
        for t in read_threads(tasks.data_root() / name, SemEvalGraded.labels)
        if not t.skip
    ]
    every = Counter(SemEvalGraded.labels[relevance] for t in usable for _, _, relevance in t.comments)
    assert labels(train) + labels(dev) == every  # the split loses no comment of a usable thread
    assert len(set(train.qids) | set(dev.qids) | set(graded["test"].qids)) == 669 + 244


def test_binary_labels_count_only_good(graded: dict[str, Pool]) -> None:
    binary = SemEval().pool("test", tasks.data_root())
    assert binary.qids == graded["test"].qids
    assert labels(binary) == {1: 818, 0: 413 + 1209}


def test_test_builds_native_shards(tmp_path: Path) -> None:
    path = build_shards("semeval", "test", root=tasks.data_root(), cache_dir=tmp_path)
    table = read_shards(path)
    assert table.num_rows == 2440 and len(pc.unique(table.column("qid"))) == 244
    assert set(table.column("ns").to_pylist()) == {"native"}
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["nota_queries"] == 33  # threads without a Good comment: real NOTA lists


HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<xml version="1.0">'


def thread(qid: str, comments: list[tuple[str, str]], skip: str = "") -> str:
    attribute = f' SubtaskA_Skip_Because_Same_As_RelQuestion_ID="{skip}"' if skip else ""
    body = "".join(
        f'<RelComment RELC_ID="{qid}_C{i}" RELC_RELEVANCE2RELQ="{rel}">\n<RelCText>{text}</RelCText>\n'
        "</RelComment>\n"
        for i, (rel, text) in enumerate(comments, start=1)
    )
    return (
        f'<Thread THREAD_SEQUENCE="{qid}"{attribute}>\n<RelQuestion RELQ_ID="{qid}">\n'
        f"<RelQSubject>Best bank?</RelQSubject>\n<RelQBody>Which &amp; why</RelQBody>\n</RelQuestion>\n"
        f"{body}</Thread>"
    )


GOOD = [HEAD, thread("Q1_R1", [("Good", "QNB"), ("Bad", "lol")]), "</xml>"]


def write(root: Path, lines: list[str]) -> Path:
    path = root / TEST_FILE
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fixture_skips_repeated_and_empty_threads(tmp_path: Path) -> None:
    repeat = thread("Q1_R2", [("Good", "same")], skip="Q1_R1")
    write(tmp_path, [HEAD, GOOD[1], repeat, thread("Q1_R3", []), "</xml>"])
    table = SemEvalGraded().load("test", tmp_path)
    assert table.column("qid").to_pylist() == ["Q1_R1", "Q1_R1"]
    assert table.column("context").to_pylist()[0] == ["Best bank? Which & why"]
    assert table.column("cid").to_pylist() == ["Q1_R1_C1", "Q1_R1_C2"]
    assert table.column("text").to_pylist() == ["QNB", "lol"]
    assert table.column("label").to_pylist() == [2, 0]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (GOOD[:-1], r"line 15: not well-formed XML \(no element found\)"),
        ([HEAD, thread("Q1_R1", [("Great", "x")]), "</xml>"], r"line 8: RELC_RELEVANCE2RELQ is 'Great'"),
        ([HEAD, thread("Q1_R1", [("Good", " ")]), "</xml>"], r"line 9: comment Q1_R1_C1 has an empty"),
        (
            [HEAD, thread("Q1_R1", [("Good", "a")]), thread("Q1_R1", [("Bad", "b")]), "</xml>"],
            r"line 17: comment id Q1_R1_C1 appears twice \(first on line 8\)",
        ),
        (
            [HEAD, GOOD[1].replace(' RELC_ID="Q1_R1_C1"', ""), "</xml>"],
            r"line 8: <RelComment> without RELC_ID",
        ),
        (
            [HEAD, '<Thread THREAD_SEQUENCE="x">', "</Thread>", "</xml>"],
            r"line 4: <Thread> starting on line 3 ",
        ),
        ([HEAD, "</xml>"], r"no <Thread> elements"),
    ],
    ids=["truncated", "relevance", "empty-comment", "duplicate", "no-id", "no-question", "no-threads"],
)
def test_bad_file(tmp_path: Path, lines: list[str], message: str) -> None:
    path = write(tmp_path, lines)
    with pytest.raises(RankuqError, match=re.escape(str(path)) + ": " + message):
        SemEval().pool("test", tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"data file not found: .*train-part2\.xml"):
        SemEval().pool("dev", tmp_path)
