"""The wikiqa task: counts and contract on the real data, every error path on small fixtures."""

import gzip
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankuq import tasks
from rankuq.contract import CANDIDATE_SCHEMA
from rankuq.errors import RankuqError
from rankuq.tasks.base import SPLITS
from rankuq.tasks.wikiqa import HEADER, WikiQA

# split: (questions, rows, questions with a correct sentence), from the data README.
EXPECTED = {"train": (2118, 20360, 873), "dev": (296, 2733, 126), "test": (633, 6165, 243)}
HEADER_LINE = "\t".join(HEADER)


def row(qid: str, question: str, cid: str, sentence: str, label: str) -> str:
    return "\t".join([qid, question, f"D{qid}", "Some page", cid, sentence, label])


GOOD = [
    HEADER_LINE,
    row("Q1", "who wrote it?", "D1-0", 'a "quoted" sentence', "0"),
    row("Q1", "who wrote it?", "D1-1", "the answer", "1"),
    row("Q2", "what is it?", "D2-0", "not an answer", "0"),
]


def write_split(root: Path, split: str, lines: list[str]) -> Path:
    """A WikiQA-style gzip TSV with CRLF line ends, as the real files have."""
    path = root / "wikiqa" / f"WikiQA-{split}.tsv.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb") as handle:
        handle.write("".join(f"{line}\r\n" for line in lines).encode())
    return path


@pytest.fixture(scope="module")
def real() -> dict[str, pa.Table]:
    root = tasks.data_root()
    return {split: WikiQA().load(split, root) for split in SPLITS}


def test_registered() -> None:
    assert "wikiqa" in tasks.names()
    assert tasks.get("wikiqa") is WikiQA


@pytest.mark.parametrize("split", SPLITS)
def test_real_counts(real: dict[str, pa.Table], split: str) -> None:
    table = real[split]
    questions, rows, answerable = EXPECTED[split]
    assert table.num_rows == rows
    assert len(pc.unique(table.column("qid"))) == questions
    answered = pc.filter(table.column("qid"), pc.invert(table.column("nota")))
    assert len(pc.unique(answered)) == answerable


@pytest.mark.parametrize("split", SPLITS)
def test_real_contract(real: dict[str, pa.Table], split: str) -> None:
    table = real[split]
    assert table.schema == CANDIDATE_SCHEMA
    assert set(table.column("task").to_pylist()) == {"wikiqa"}
    assert set(table.column("split").to_pylist()) == {split}
    assert set(table.column("ns").to_pylist()) == {"native"}
    assert set(table.column("label").to_pylist()) <= {0, 1}
    assert set(pc.list_value_length(table.column("context")).to_pylist()) == {1}


@pytest.mark.parametrize("split", SPLITS)
def test_real_queries_contiguous_and_nota_consistent(real: dict[str, pa.Table], split: str) -> None:
    frame = real[split].select(["qid", "label", "nota"]).to_pandas()
    runs = frame["qid"].ne(frame["qid"].shift()).cumsum()
    assert runs.nunique() == frame["qid"].nunique()  # one run of rows per question
    by_question = frame.groupby("qid")
    assert (by_question["nota"].nunique() == 1).all()
    assert (by_question["nota"].first() == (by_question["label"].max() == 0)).all()


def test_real_splits_share_no_question(real: dict[str, pa.Table]) -> None:
    qids = {split: set(table.column("qid").to_pylist()) for split, table in real.items()}
    assert not qids["train"] & qids["dev"]
    assert not qids["train"] & qids["test"]
    assert not qids["dev"] & qids["test"]


def test_fixture_rows_in_file_order(tmp_path: Path) -> None:
    write_split(tmp_path, "dev", GOOD)
    table = WikiQA().load("dev", tmp_path)
    assert table.column("cid").to_pylist() == ["D1-0", "D1-1", "D2-0"]
    assert table.column("label").to_pylist() == [0, 1, 0]  # '\r' stripped from Label
    assert table.column("nota").to_pylist() == [False, False, True]
    assert table.column("context").to_pylist()[0] == ["who wrote it?"]
    assert table.column("text").to_pylist()[0] == 'a "quoted" sentence'
    assert np.all(table.column("split").to_numpy(zero_copy_only=False) == "dev")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([HEADER_LINE.replace("Label", "Relevance"), *GOOD[1:]], r"line 1: header .*expected"),
        ([*GOOD, "Q3\tq?\tD3\tpage\tD3-0\tno label"], r"line 5: 6 tab-separated fields"),
        ([GOOD[0], GOOD[1], row("Q1", "who?", "D1-1", "x", "2")], r"line 3: Label is '2'"),
        ([GOOD[0], row("Q1", " ", "D1-0", "x", "0")], r"line 2: empty Question"),
        ([GOOD[0], row("Q1", "who?", "D1-0", "", "0")], r"line 2: empty Sentence"),
        ([*GOOD, row("Q1", "who?", "D1-2", "x", "0")], r"line 5: QuestionID Q1 reappears"),
        ([HEADER_LINE], r"no rows after the header"),
    ],
    ids=["header", "short-row", "label", "question", "sentence", "split-question", "empty"],
)
def test_bad_file(tmp_path: Path, lines: list[str], message: str) -> None:
    write_split(tmp_path, "dev", lines)
    with pytest.raises(RankuqError, match=re.escape("WikiQA-dev.tsv.gz: ") + message):
        WikiQA().load("dev", tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"WikiQA-test\.tsv\.gz.*RANKUQ_DATA.*--data-dir"):
        WikiQA().load("test", tmp_path)


def test_not_gzip(tmp_path: Path) -> None:
    path = tmp_path / "wikiqa" / "WikiQA-dev.tsv.gz"
    path.parent.mkdir()
    path.write_text("\r\n".join(GOOD))
    with pytest.raises(RankuqError, match=r"WikiQA-dev\.tsv\.gz: not a readable gzip"):
        WikiQA().load("dev", tmp_path)


def test_unknown_split(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"unknown split 'validation'.*train, dev, test"):
        WikiQA().load("validation", tmp_path)
