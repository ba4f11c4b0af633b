"""irds:<id> tasks through the real ir_datasets package, on datasets registered over local files."""

import logging
from pathlib import Path

import pytest

from rankuq import tasks
from rankuq.errors import RankuqError
from rankuq.tasks.shards import build_shards

ir_datasets = pytest.importorskip("ir_datasets")
from ir_datasets.datasets.base import Dataset  # noqa: E402
from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries  # noqa: E402
from ir_datasets.util import LocalDownload  # noqa: E402

DOCS = "".join(f"d{i}\tpassage {i} about topic {i % 3}\n" for i in range(12)) + "d99\t \n"
QUERIES = "q1\ttopic 1 passages\nq2\ttopic 2\nq3\tunjudged\n"
QRELS = {
    "train": "q1 0 d1 2\nq1 0 d4 1\nq1 0 d7 0\nq2 0 d2 1\nq2 0 d99 1\n",
    "test": "q2 0 d5 -1\nq2 0 d2 1\nq9 0 d1 1\n",  # q9 has no query text
}


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``rankuq-test/{split}`` for train and test, registered with ir_datasets over local files."""
    folder = tmp_path_factory.mktemp("irds")
    (folder / "docs.tsv").write_text(DOCS)
    (folder / "queries.tsv").write_text(QUERIES)
    for split, lines in QRELS.items():
        (folder / f"{split}.qrels").write_text(lines)
        dataset = Dataset(
            TsvDocs(LocalDownload(folder / "docs.tsv")),
            TsvQueries(LocalDownload(folder / "queries.tsv")),
            TrecQrels(LocalDownload(folder / f"{split}.qrels"), {0: "no", 1: "yes", 2: "very"}),
        )
        ir_datasets.registry.register(f"rankuq-test/{split}", dataset)
    return "rankuq-test/{split}"


def test_an_ir_datasets_dataset_per_split(registered: str, caplog: pytest.LogCaptureFixture) -> None:
    task = tasks.get(f"irds:{registered}")
    assert task.splits == ("train", "dev", "test") and task is tasks.get(f"irds:{registered}")
    with caplog.at_level(logging.WARNING):
        pool = task().pool("train", Path("unused"))
    assert pool.qids == ["q1", "q2"] and pool.contexts == [["topic 1 passages"], ["topic 2"]]
    assert len(pool.cids) == 12 and "d99" not in pool.cids  # the empty document is skipped
    assert [(pool.cids[row], label) for row, label in pool.judged[0]] == [("d1", 2), ("d4", 1), ("d7", 0)]
    assert "skipped 1 documents with no text" in caplog.text
    assert "dropped 1 judgments of documents with no title and no text" in caplog.text


def test_a_qrels_query_without_text_is_a_clear_error(registered: str) -> None:
    with pytest.raises(RankuqError, match=r"irds:rankuq-test/test/qrels: line 3: query id q9 is not in"):
        tasks.get(f"irds:{registered}")().pool("test", Path("unused"))


def test_an_id_without_split_is_test_only_and_builds_shards(registered: str, tmp_path: Path) -> None:
    task = tasks.get("irds:rankuq-test/train")
    assert task.splits == ("test",)
    path = build_shards("irds:rankuq-test/train", "test", root=tmp_path, cache_dir=tmp_path, n=4)
    assert path.name.startswith("irds+rankuq-test+train-test-")


def test_unknown_ids_and_patterns() -> None:
    with pytest.raises(RankuqError, match=r"irds:no-such/thing: not an ir_datasets id"):
        tasks.get("irds:no-such/thing")().pool("test", Path("unused"))
    with pytest.raises(RankuqError, match=r"name an ir_datasets id, e\.g\. irds:beir/scifact/\{split\}"):
        tasks.get("irds:beir/{name}")
    with pytest.raises(RankuqError, match=r"unknown split 'dev' for task irds:x"):
        tasks.get("irds:x")().pool("dev", Path("unused"))
