"""Users' tables as tasks: parquet:<path> on real WikiQA lists, hf:<path> on small saved datasets."""

import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rankuq import tasks
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.tasks.shards import build_shards
from rankuq.tasks.wikiqa import WikiQA


@pytest.fixture(scope="module")
def wikiqa() -> dict[str, pa.Table]:
    return {split: WikiQA().load(split, tasks.data_root()) for split in ("dev", "test")}


@pytest.fixture(scope="module")
def lists(wikiqa: dict[str, pa.Table], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """WikiQA's dev and test lists as one contract-1 Parquet file, as another tool would write them."""
    path = tmp_path_factory.mktemp("parquet") / "wikiqa.parquet"
    pq.write_table(pa.concat_tables(wikiqa.values()), path)
    return path


def test_a_contract_parquet_file_is_a_task_with_its_splits(wikiqa: dict[str, pa.Table], lists: Path) -> None:
    task = tasks.get(f"parquet:{lists}")
    assert task is tasks.get(f"parquet:{lists}") and task.name == f"parquet:{lists}"
    table = task().load("test", Path("unused"))
    original = wikiqa["test"]
    assert table.column("task").unique().to_pylist() == [f"parquet:{lists}"]
    for name in ("qid", "context", "cid", "text", "label", "nota"):
        assert table.column(name).equals(original.column(name)), name
    with pytest.raises(
        RankuqError, match=r"wikiqa\.parquet: no rows of split 'train'; its splits: dev, test"
    ):
        task().pool("train", Path("unused"))


def test_a_parquet_task_builds_shards_keyed_by_the_files_bytes(lists: Path, tmp_path: Path) -> None:
    path = build_shards(f"parquet:{lists}", "dev", root=tmp_path, cache_dir=tmp_path / "cache")
    assert path.parent == tmp_path / "cache" and path.name.startswith("parquet+")
    assert "+wikiqa.parquet-dev-" in path.name
    assert re.fullmatch(r"[\w.+-]+", path.name)
    table = read_shards(path)
    assert table.num_rows == 2733 and len(pc.unique(table.column("qid"))) == 296
    assert build_shards(f"parquet:{lists}", "dev", root=tmp_path, cache_dir=tmp_path / "cache") == path


def test_a_folder_of_parquet_files(wikiqa: dict[str, pa.Table], tmp_path: Path) -> None:
    for split, table in wikiqa.items():
        pq.write_table(table, tmp_path / f"{split}.parquet")
    pool = tasks.get(f"parquet:{tmp_path}")().pool("dev", tmp_path)
    assert len(pool.qids) == 296 and pool.native


ROWS = {
    "qid": ["q1", "q1", "q2"],
    "context": [["who?"], ["who?"], ["what?"]],
    "cid": ["a", "b", "c"],
    "text": ["Ann", "Bob", "a cat"],
    "label": [1, 0, 0],
    "task": ["x"] * 3,
    "split": ["dev"] * 3,
    "ns": ["native"] * 3,
    "nota": [False, False, True],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"label": None}, r"missing candidate columns \['label'\]"),
        ({"qid": ["q1", "q2", "q1"]}, r"row 2: rows of query 'q1' are not contiguous"),
        ({"cid": ["a", "b", "a"]}, r"row 2: cid a has two texts"),
        (
            {"cid": ["a", "a", "c"], "text": ["Ann", "Ann", "a cat"]},
            r"row 1: candidate a appears twice in query q1",
        ),
        ({"context": [["who?"], ["whom?"], ["what?"]]}, r"row 1: query q1 has two contexts"),
    ],
)
def test_a_bad_parquet_file_names_the_row(tmp_path: Path, change: dict, message: str) -> None:
    rows = {name: values for name, values in (ROWS | change).items() if values is not None}
    pq.write_table(pa.table(rows), tmp_path / "bad.parquet")
    with pytest.raises(RankuqError, match=re.escape(str(tmp_path / "bad.parquet")) + ": " + message):
        tasks.get(f"parquet:{tmp_path / 'bad.parquet'}")().pool("dev", tmp_path)


def test_bad_table_task_names(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"task 'parquet:.*nowhere\.parquet': .* not found"):
        tasks.get(f"parquet:{tmp_path / 'nowhere.parquet'}")().pool("dev", tmp_path)
    with pytest.raises(RankuqError, match=r"takes no column mapping; drop \?text=answer"):
        tasks.get(f"parquet:{tmp_path}?text=answer")
    with pytest.raises(RankuqError, match=r"task 'parquet:': name a path"):
        tasks.get("parquet:")
    with pytest.raises(RankuqError, match=r"map contract columns qid, context, .* \(got answer\)"):
        tasks.get(f"hf:{tmp_path}?answer=text")
    families = r"or beir/<name>, irds:<id>, parquet:<path>, hf:<path>\?contract=column$"
    with pytest.raises(RankuqError, match=families):
        tasks.get("my-lists")


QA: dict[str, list[Any]] = {
    "question_id": ["Q1", "Q1", "Q1", "Q2", "Q2"],
    "question": ["who wrote hamlet?"] * 3 + ["how tall is everest?"] * 2,
    "answer": ["Shakespeare wrote it.", "It is a play.", "Denmark.", "8,849 m.", "In Nepal."],
    "label": [1, 0, 0, 1, 0],
}


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    datasets = pytest.importorskip("datasets")
    test = {name: [*values[3:], values[0]] for name, values in QA.items()}  # Q2 first, Q1 after
    parts = {"train": datasets.Dataset.from_dict(QA), "validation": datasets.Dataset.from_dict(test)}
    datasets.DatasetDict(parts).save_to_disk(str(tmp_path / "qa"))
    return tmp_path / "qa"


def test_a_saved_hugging_face_dataset_with_mapped_columns(saved: Path) -> None:
    task = tasks.get(f"hf:{saved}?qid=question_id&context=question&text=answer")
    pool = task().pool("train", saved)
    assert pool.qids == ["Q1", "Q2"] and pool.contexts == [["who wrote hamlet?"], ["how tall is everest?"]]
    assert [[(pool.texts[row], label) for row, label in judged] for judged in pool.judged] == [
        [("Shakespeare wrote it.", 1), ("It is a play.", 0), ("Denmark.", 0)],
        [("8,849 m.", 1), ("In Nepal.", 0)],
    ]
    dev = task().pool("dev", saved)  # Hugging Face's validation split; Q1's row after Q2's
    assert dev.qids == ["Q2", "Q1"] and [len(judged) for judged in dev.judged] == [2, 1]


def test_without_ids_a_query_is_its_context_and_a_candidate_its_text(saved: Path, tmp_path: Path) -> None:
    table = tasks.get(f"hf:{saved}?context=question&text=answer")().load("train", saved)
    assert len(pc.unique(table.column("qid"))) == 2 and len(pc.unique(table.column("cid"))) == 5
    assert table.column("label").to_pylist() == QA["label"]
    path = build_shards(
        f"hf:{saved}?context=question&text=answer", "train", root=tmp_path, cache_dir=tmp_path / "c"
    )
    assert read_shards(path).num_rows == 5


def test_a_hugging_face_dataset_missing_a_column_or_a_bad_label(saved: Path, tmp_path: Path) -> None:
    with pytest.raises(
        RankuqError, match=r"qa: no column 'text' for the contract's text; columns: question_id"
    ):
        tasks.get(f"hf:{saved}?context=question")().pool("train", saved)
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_dict(QA | {"label": [1, 0, -1, 1, 0]}).save_to_disk(str(tmp_path / "bad"))
    with pytest.raises(RankuqError, match=r"bad: row 2: label -1 is outside 0\.\.127"):
        tasks.get(f"hf:{tmp_path / 'bad'}?context=question&text=answer")().pool("test", saved)


def test_a_folder_of_data_files_load_dataset_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "cache")
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "train.csv").write_text("question,answer,label\nwho?,Ann,1\nwho?,Bob,0\nwhy?,because,1\n")
    (folder / "test.csv").write_text("question,answer,label\nwhere?,here,1\n")
    pool = tasks.get(f"hf:{folder}?context=question&text=answer")().pool("train", tmp_path)
    assert pool.contexts == [["who?"], ["why?"]] and [len(judged) for judged in pool.judged] == [2, 1]


def test_a_single_dataset_splits_by_a_mapped_column_or_is_test_only(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    parts = ["train", "train", "train", "validation", "validation"]
    datasets.Dataset.from_dict(QA | {"part": parts}).save_to_disk(str(tmp_path / "one"))
    task = tasks.get(f"hf:{tmp_path / 'one'}?qid=question_id&context=question&text=answer&split=part")()
    assert task.pool("train", tmp_path).qids == ["Q1"] and task.pool("dev", tmp_path).qids == ["Q2"]
    unsplit = tasks.get(f"hf:{tmp_path / 'one'}?qid=question_id&context=question&text=answer")()
    assert unsplit.pool("test", tmp_path).qids == ["Q1", "Q2"]
    with pytest.raises(RankuqError, match=r"one: no rows of split 'train'; its splits: test"):
        unsplit.pool("train", tmp_path)
