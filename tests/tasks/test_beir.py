"""BEIR-style folders (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) on fixture files."""

import json
from pathlib import Path

import pytest

from rankuq import tasks
from rankuq.errors import RankuqError
from rankuq.tasks.beir import Beir, MsMarco
from rankuq.tasks.lists import build_lists

CORPUS = [
    {"_id": f"d{i}", "title": f"title {i}", "text": f"passage number {i} about topic {i % 3}"}
    for i in range(12)
]
QUERIES = [
    {"_id": "q1", "text": "topic 1 passages"},
    {"_id": "q2", "text": "topic 2"},
    {"_id": "q3", "text": "unused"},
]
QRELS = ["query-id\tcorpus-id\tscore", "q1\td1\t2", "q1\td4\t1", "q1\td7\t0", "q2\td2\t1"]


def write(root: Path, corpus: list = CORPUS, queries: list = QUERIES, qrels: list[str] = QRELS) -> Path:
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(f"{json.dumps(r) if not isinstance(r, str) else r}\n" for r in corpus)
    )
    (folder / "queries.jsonl").write_text("".join(f"{json.dumps(r)}\n" for r in queries))
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return folder


def test_pool_from_qrels_with_grades(tmp_path: Path) -> None:
    write(tmp_path)
    pool = Beir().pool("test", tmp_path)
    assert not pool.native and pool.qids == ["q1", "q2"]  # q3 has no judgments
    assert pool.contexts == [["topic 1 passages"], ["topic 2"]]
    assert len(pool.cids) == 12 and pool.texts[0] == "title 0 passage number 0 about topic 0"
    assert [(pool.cids[row], label) for row, label in pool.judged[0]] == [("d1", 2), ("d4", 1), ("d7", 0)]
    table = build_lists(pool, "bm25", n=5)
    q1 = table.filter(table.column("qid").to_numpy(zero_copy_only=False) == "q1")
    assert sorted(q1.column("label").to_pylist()) == [0, 0, 0, 1, 2]


def test_registry_files() -> None:
    assert tasks.get("msmarco") is MsMarco
    assert MsMarco.files == (
        "msmarco/corpus.jsonl",
        "msmarco/queries.jsonl",
        "msmarco/qrels/train.tsv",
        "msmarco/qrels/dev.tsv",
        "msmarco/qrels/test.tsv",
    )
    assert Beir().default_strategy("test") == "bm25"


def test_negative_grade_counts_as_non_relevant(tmp_path: Path) -> None:
    write(tmp_path, qrels=[*QRELS, "q2\td5\t-1"])
    assert Beir().pool("test", tmp_path).judged[1][-1][1] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"qrels": [*QRELS, "q2\td99\t1"]}, r"qrels/test\.tsv: line 6: document id d99 is not in the corpus"),
        (
            {"qrels": [*QRELS, "q9\td1\t1"]},
            r"qrels/test\.tsv: line 6: query id q9 is not in .*queries\.jsonl",
        ),
        ({"qrels": ["qid\tdocid\tscore", "q1\td1\t1"]}, r"qrels/test\.tsv: line 1: header is"),
        ({"qrels": [*QRELS, "q1\td2"]}, r"qrels/test\.tsv: line 6: 2 tab-separated fields, expected 3"),
        ({"qrels": [*QRELS, "q1\td2\thigh"]}, r"qrels/test\.tsv: line 6: relevance grade is 'high'"),
        ({"qrels": QRELS[:1]}, r"qrels/test\.tsv: no judgments after the header"),
        ({"corpus": [*CORPUS, "{not json"]}, r"corpus\.jsonl: line 13: not valid JSON"),
        ({"corpus": [*CORPUS, {"_id": "d99"}]}, r"corpus\.jsonl: line 13: missing string key 'text'"),
        (
            {"corpus": [*CORPUS, {"_id": "d1", "text": "again"}]},
            r"corpus\.jsonl: line 13: document _id d1 appears twice",
        ),
        ({"corpus": [*CORPUS, {"_id": "d99", "text": " "}]}, r"corpus\.jsonl: line 13: empty text"),
        ({"queries": [{"_id": "q1", "text": ""}]}, r"queries\.jsonl: line 1: empty query text"),
    ],
)
def test_bad_files(tmp_path: Path, kwargs: dict, message: str) -> None:
    write(tmp_path, **kwargs)
    with pytest.raises(RankuqError, match=message):
        Beir().pool("test", tmp_path)


def test_missing_split_qrels(tmp_path: Path) -> None:
    write(tmp_path)
    with pytest.raises(RankuqError, match=r"data file not found: .*beir/qrels/dev\.tsv"):
        Beir().pool("dev", tmp_path)
