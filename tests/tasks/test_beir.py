"""BEIR-style folders (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) on fixture files."""

import gzip
import json
from pathlib import Path

import pytest

from rankuq import tasks
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.tasks.beir import Beir, MsMarco
from rankuq.tasks.lists import build_lists
from rankuq.tasks.shards import build_shards

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
        (
            {"corpus": [*CORPUS, {"_id": "d1", "title": "", "text": ""}]},
            r"corpus\.jsonl: line 13: document _id d1 appears twice",
        ),
        ({"queries": [{"_id": "q1", "text": ""}]}, r"queries\.jsonl: line 1: empty query text"),
        (  # issue 48: the second text was taken silently
            {"queries": [*QUERIES, {"_id": "q1", "text": "another question"}]},
            r"queries\.jsonl: line 4: query _id q1 appears twice with different texts; keep one$",
        ),
        (
            {"queries": [*QUERIES, {"_id": "q2", "text": 7}]},
            r"queries\.jsonl: line 4: 'text' is int \(7\), expected a string$",
        ),
        (
            {"corpus": [*CORPUS, {"_id": "d99", "text": None}]},
            r"corpus\.jsonl: line 13: 'text' is null \(None\), expected a string$",
        ),
        (  # issue 48: it passed --plan, then failed in Ray Data after 73 s
            {"qrels": ["query-id\tcorpus-id\tscore", "q1\td1\t0", "q2\td2\t-1"]},
            r"qrels/test\.tsv: every judgment is 0 \(not relevant\), so no query has a relevant document",
        ),
    ],
)
def test_bad_files(tmp_path: Path, kwargs: dict, message: str) -> None:
    write(tmp_path, **kwargs)
    with pytest.raises(RankuqError, match=message):
        Beir().pool("test", tmp_path)


def test_a_missing_split_names_the_splits_the_qrels_folder_has(tmp_path: Path) -> None:
    write(tmp_path)
    message = (
        r"beir/qrels/dev\.tsv not found: beir has no dev split; its qrels folder has test; beir is test-only"
    )
    with pytest.raises(RankuqError, match=message):
        Beir().pool("dev", tmp_path)


def test_a_query_given_twice_with_the_same_text_is_read_once(tmp_path: Path) -> None:
    write(tmp_path, queries=[*QUERIES, {"_id": "q1", "text": "topic 1 passages"}])
    assert Beir().pool("test", tmp_path).contexts[0] == ["topic 1 passages"]


@pytest.mark.parametrize("packed", ["corpus.jsonl", "qrels/test.tsv"])
def test_a_gzipped_file_is_named_not_taken_for_a_missing_one(tmp_path: Path, packed: str) -> None:
    folder = write(tmp_path)
    path = folder / packed
    path.with_name(f"{path.name}.gz").write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    name = path.name.replace(".", r"\.")
    with pytest.raises(
        RankuqError, match=rf"{name}\.gz: gzip is not read in a BEIR folder; gunzip it to {name}$"
    ):
        Beir().pool("test", tmp_path)


def test_a_missing_folder_s_advice_names_the_data_folder_that_holds_beir(tmp_path: Path) -> None:
    """Not the folder one level down, which holds my-data/ (issue 48)."""
    with pytest.raises(
        RankuqError, match=r"my-data/corpus\.jsonl; .* --data-dir to the data folder that holds beir/$"
    ):
        tasks.get("beir/my-data")().pool("test", tmp_path)


def test_documents_without_title_and_text_are_skipped_with_their_judgments(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    empty = [{"_id": "e1", "title": "", "text": ""}, {"_id": "e2", "text": "  "}]
    qrels = [*QRELS, "q1\te1\t1", "q3\te2\t1", "q3\te1\t0"]  # q3 is left with no judgment
    write(tmp_path, corpus=[*CORPUS, *empty], qrels=qrels)
    pool = Beir().pool("test", tmp_path)
    assert "e1" not in pool.cids and "e2" not in pool.cids and len(pool.cids) == 12
    assert pool.qids == ["q1", "q2"]
    assert [pool.cids[row] for row, _ in pool.judged[0]] == ["d1", "d4", "d7"]
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 2
    assert warnings[0].endswith("corpus.jsonl: skipped 2 documents with no title and no text")
    assert warnings[1].endswith(
        "test.tsv: dropped 3 judgments of documents with no title and no text (1 queries left with none)"
    )


def write_dataset(root: Path, name: str, splits: tuple[str, ...]) -> None:
    """A BEIR dataset under beir/<name>/ with a qrels file for each of ``splits``."""
    folder = write(root / "staging")
    target = root / "beir" / name
    target.mkdir(parents=True)
    for part in ("corpus.jsonl", "queries.jsonl"):
        (target / part).write_text((folder / part).read_text())
    (target / "qrels").mkdir()
    for split in splits:
        (target / "qrels" / f"{split}.tsv").write_text((folder / "qrels" / "test.tsv").read_text())


def test_beir_name_reads_its_folder_with_the_splits_its_qrels_have(tmp_path: Path) -> None:
    write_dataset(tmp_path, "scifact", ("train", "test"))
    write_dataset(tmp_path, "cqadupstack/android", ("test",))
    scifact = tasks.get("beir/scifact")
    assert scifact is tasks.get("beir/scifact") and scifact.name == "beir/scifact"
    assert scifact().available_splits(tmp_path) == ("train", "test")
    pool = scifact().pool("train", tmp_path)
    assert pool.task == "beir/scifact" and pool.qids == ["q1", "q2"]
    assert pool.source == tmp_path / "beir" / "scifact" / "qrels" / "train.tsv"
    android = tasks.get("beir/cqadupstack/android")()
    assert android.available_splits(tmp_path) == ("test",)
    with pytest.raises(
        RankuqError, match=r"has no train split; .* is test-only: use it as a shift's test side"
    ):
        android.pool("train", tmp_path)


def test_beir_name_builds_shards_in_one_cache_folder(tmp_path: Path) -> None:
    write_dataset(tmp_path, "scifact", ("test",))
    path = build_shards("beir/scifact", "test", root=tmp_path, cache_dir=tmp_path / "cache", n=4)
    assert path.parent == tmp_path / "cache" and path.name.startswith("beir+scifact-test-")
    table = read_shards(path)
    assert set(table.column("task").to_pylist()) == {"beir/scifact"}
    assert table.num_rows == 8 and set(table.column("ns").to_pylist()) == {"bm25"}


@pytest.mark.parametrize("name", ["beir/", "beir/../wikiqa", "beir/a b"])
def test_a_bad_beir_name_is_refused(name: str) -> None:
    with pytest.raises(RankuqError, match=r"name a folder under beir/"):
        tasks.get(name)


def test_an_unknown_task_lists_the_families() -> None:
    with pytest.raises(RankuqError, match=r"unknown task 'scifact'; valid tasks: .*wikiqa; or beir/<name>"):
        tasks.get("scifact")


def as_beir(pool, root: Path) -> Path:
    """A pool written as a BEIR folder whose qrels judge every candidate (grade 0 included)."""
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    pairs = zip(pool.cids, pool.texts, strict=True)
    corpus = [{"_id": cid, "title": "", "text": text} for cid, text in pairs]
    (folder / "corpus.jsonl").write_text("".join(f"{json.dumps(r)}\n" for r in corpus))
    queries = [{"_id": q, "text": " ".join(c)} for q, c in zip(pool.qids, pool.contexts, strict=True)]
    (folder / "queries.jsonl").write_text("".join(f"{json.dumps(r)}\n" for r in queries))
    judged = [
        f"{qid}\t{pool.cids[row]}\t{label}"
        for qid, pairs in zip(pool.qids, pool.judged, strict=True)
        for row, label in pairs
    ]
    (folder / "qrels" / "test.tsv").write_text("\n".join(["query-id\tcorpus-id\tscore", *judged]) + "\n")
    return folder


def _lists(table) -> list[tuple]:
    return list(zip(*(table.column(c).to_pylist() for c in ("qid", "text", "label")), strict=True))


@pytest.mark.parametrize("n", [None, 5])
def test_judged_lists_of_wikiqa_in_beir_form_are_wikiqas_native_lists(tmp_path: Path, n: int | None) -> None:
    """WikiQA's test split written as a BEIR folder (qrels judging every page sentence): ``ns: judged``
    gives WikiQA's own lists, whole (n None) or cut to n, the same queries, texts, labels and order."""
    wikiqa = tasks.get("wikiqa")().pool("test", tasks.data_root())
    as_beir(wikiqa, tmp_path)
    beir = Beir().pool("test", tmp_path)
    native = build_lists(wikiqa, "native", n=n, seed=1)
    judged = build_lists(beir, "judged", n=n, seed=1)
    assert judged.num_rows == native.num_rows > 0 and _lists(judged) == _lists(native)
    assert set(judged.column("ns").to_pylist()) == {"judged"}


def test_judged_without_judged_negatives_names_the_fix(tmp_path: Path) -> None:
    write(tmp_path, qrels=["query-id\tcorpus-id\tscore", "q1\td1\t2", "q2\td2\t1"])
    with pytest.raises(RankuqError, match=r"no query of .*judged non-relevant.*use bm25, random or dense"):
        build_lists(Beir().pool("test", tmp_path), "judged", n=3)
