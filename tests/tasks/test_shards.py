"""Parquet shard cache: content-hashed, atomic, cut at query boundaries."""

import gzip
import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rankuq import tasks
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.tasks import shards
from rankuq.tasks.shards import build_shards
from rankuq.tasks.wikiqa import WikiQA


@pytest.fixture(scope="module")
def dev() -> pa.Table:
    return WikiQA().load("dev", tasks.data_root())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A private copy of the real dev split, free to modify."""
    folder = tmp_path / "data" / "wikiqa"
    folder.mkdir(parents=True)
    shutil.copy(tasks.data_root() / "wikiqa" / "WikiQA-dev.tsv.gz", folder)
    return folder.parent


def temp_folders(cache: Path) -> list[Path]:
    return [path for path in cache.iterdir() if path.name.startswith(".")]


def test_round_trip_on_real_data(tmp_path: Path, dev: pa.Table) -> None:
    path = build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=tmp_path)
    assert path.parent == tmp_path
    assert path.name.startswith("wikiqa-dev-") and len(path.name) == len("wikiqa-dev-") + 12
    assert read_shards(path).equals(dev)
    assert not temp_folders(tmp_path)


def test_queries_not_split_across_shards(tmp_path: Path, dev: pa.Table) -> None:
    path = build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=tmp_path, rows_per_shard=100)
    assert read_shards(path).equals(dev)
    parts = sorted(path.glob("part-*.parquet"))
    tables = [pq.read_table(part) for part in parts]
    assert len(parts) > 20  # 2,733 rows in shards of about 100
    qid_sets = [set(table.column("qid").to_pylist()) for table in tables]
    assert sum(map(len, qid_sets)) == len(set().union(*qid_sets)) == 296
    longest = max(pc.value_counts(dev.column("qid")).field("counts").to_pylist())
    assert all(table.num_rows <= max(100, longest) for table in tables)


def test_cache_hit_does_not_rewrite(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    path = build_shards("wikiqa", "dev", root=root, cache_dir=cache)
    stamps = {part: part.stat().st_mtime_ns for part in path.iterdir()}

    def no_reload(*_: object) -> None:
        raise AssertionError("a cache hit must not reload the source data")

    monkeypatch.setattr(WikiQA, "pool", no_reload)
    assert build_shards("wikiqa", "dev", root=root, cache_dir=cache) == path
    assert {part: part.stat().st_mtime_ns for part in path.iterdir()} == stamps


@pytest.mark.parametrize(
    "damage",
    [
        lambda folder: _cut(folder / "part-00001.parquet"),
        lambda folder: (folder / "part-00002.parquet").unlink(),
        lambda folder: (folder / "manifest.json").write_text("{"),
        lambda folder: (folder / "part-00001.parquet").write_bytes(b"PAR1" + b"\0" * 100),
    ],
    ids=["part cut short", "part missing", "manifest garbage", "part replaced"],
)
def test_a_damaged_cache_entry_is_rebuilt_with_one_warning(
    root: Path, tmp_path: Path, dev: pa.Table, caplog: pytest.LogCaptureFixture, damage
) -> None:
    cache = tmp_path / "cache"
    path = build_shards("wikiqa", "dev", root=root, cache_dir=cache, rows_per_shard=500)
    damage(path)
    assert build_shards("wikiqa", "dev", root=root, cache_dir=cache, rows_per_shard=500) == path
    (warning,) = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert warning.startswith(f"{path}: cached shards ") and warning.endswith("; rebuilding them")
    assert read_shards(path).equals(dev)


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def test_changed_source_or_setting_changes_hash(root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = build_shards("wikiqa", "dev", root=root, cache_dir=cache)
    assert build_shards("wikiqa", "dev", root=root, cache_dir=cache, rows_per_shard=512) != first
    source = root / "wikiqa" / "WikiQA-dev.tsv.gz"
    text = gzip.decompress(source.read_bytes()).replace(b"\t1\r\n", b"\t0\r\n", 1)
    source.write_bytes(gzip.compress(text))
    second = build_shards("wikiqa", "dev", root=root, cache_dir=cache)
    assert second != first
    assert pc.sum(read_shards(second).column("label")).as_py() == 139  # one positive fewer
    assert not temp_folders(cache)


def test_include_nota_false_drops_exactly_nota_queries(tmp_path: Path, dev: pa.Table) -> None:
    path = build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=tmp_path, include_nota=False)
    kept = read_shards(path)
    assert kept.equals(dev.filter(pc.invert(dev.column("nota"))))
    assert len(pc.unique(kept.column("qid"))) == 126


def test_interrupted_build_leaves_nothing(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    write_table = pq.write_table  # the module shards writes with
    calls = []

    def fail_second(*args: object, **kwargs: object) -> None:
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        write_table(*args, **kwargs)

    monkeypatch.setattr(pq, "write_table", fail_second)
    with pytest.raises(KeyboardInterrupt):
        build_shards("wikiqa", "dev", root=root, cache_dir=cache, rows_per_shard=100)
    assert list(cache.iterdir()) == []


def test_leftover_temp_folder_is_ignored(root: Path, tmp_path: Path, dev: pa.Table) -> None:
    cache = tmp_path / "cache"
    expected = build_shards("wikiqa", "dev", root=root, cache_dir=cache)
    shutil.rmtree(expected)
    leftover = cache / f".{expected.name}.tmp-crashed"
    leftover.mkdir()
    (leftover / "part-00000.parquet").write_bytes(b"half written")
    assert build_shards("wikiqa", "dev", root=root, cache_dir=cache) == expected
    assert read_shards(expected).equals(dev)


def test_concurrent_publish_is_a_hit(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    replace = os.replace  # rankuq.atomic publishes with it

    def other_writer_first(source: Path, target: Path) -> None:
        shutil.copytree(source, target)  # another process published the same entry meanwhile
        replace(source, target)

    monkeypatch.setattr(os, "replace", other_writer_first)
    path = build_shards("wikiqa", "dev", root=root, cache_dir=cache)
    assert read_shards(path).num_rows == 2733
    assert not temp_folders(cache)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": "nope"}, r"unknown task 'nope'; valid tasks: .*wikiqa"),
        ({"split": "validation"}, r"unknown split 'validation'.*train, dev, test"),
        ({"rows_per_shard": 0}, r"rows_per_shard is 0"),
    ],
)
def test_bad_arguments(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    arguments = {"task": "wikiqa", "split": "dev", "rows_per_shard": 2048} | kwargs
    with pytest.raises(RankuqError, match=message):
        build_shards(**arguments, root=tasks.data_root(), cache_dir=tmp_path)  # type: ignore[arg-type]


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"WikiQA-dev\.tsv\.gz.*RANKUQ_DATA"):
        build_shards("wikiqa", "dev", root=tmp_path, cache_dir=tmp_path / "cache")


def test_read_shards_errors(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match="no shard folder"):
        read_shards(tmp_path / "absent")
    (tmp_path / "part-00000.parquet").write_bytes(b"not parquet")
    with pytest.raises(RankuqError, match=r"unreadable shards.*delete the folder"):
        read_shards(tmp_path)


def test_settings_change_the_folder_and_manifest_records_them(tmp_path: Path) -> None:
    root = tasks.data_root()
    settings: list[dict[str, Any]] = [
        {},
        {"strategy": "random"},
        {"n": 5},
        {"seed": 1},
        {"variant": "nota"},
        {"variant": "imbalance", "n": 3},
    ]
    folders = {build_shards("clariq", "dev", root=root, cache_dir=tmp_path, **kwargs) for kwargs in settings}
    assert len(folders) == 6
    default = build_shards("clariq", "dev", root=root, cache_dir=tmp_path)
    assert default in folders  # same settings, same folder
    drawn = build_shards("clariq", "dev", root=root, cache_dir=tmp_path, strategy="random")
    assert "strategy_version" not in json.loads((drawn / "manifest.json").read_text())
    manifest = json.loads((default / "manifest.json").read_text())
    assert manifest.pop("part_bytes") == {
        "part-00000.parquet": (default / "part-00000.parquet").stat().st_size
    }
    assert manifest | {"rows_per_shard": 0} == {
        "task": "clariq",
        "split": "dev",
        "strategy": "bm25",  # no native lists: the default strategy
        "n": 10,
        "seed": 0,
        "variant": "standard",
        "include_nota": True,
        "rows_per_shard": 0,
        "schema": shards.SCHEMA_VERSION,
        "strategy_version": 1,  # bm25's lists since ties go by corpus row; a strategy at 0 has none
        "pool_queries": 50,
        "queries": 50,
        "nota_queries": 0,
        "rows": 500,
    }


def test_clariq_shards_keep_clarification_need(tmp_path: Path) -> None:
    table = read_shards(build_shards("clariq", "test", root=tasks.data_root(), cache_dir=tmp_path))
    assert table.schema.names[-1] == "clarification_need"
    assert table.column("clarification_need").null_count == 0


def test_dense_shards_reuse_embeddings(tmp_path: Path, stub_encoder: list[int]) -> None:
    root = tasks.data_root()
    first = build_shards("clariq", "dev", root=root, cache_dir=tmp_path, strategy="dense")
    encoded = list(stub_encoder)
    assert encoded == [3940, 50]  # the question bank, then the requests
    build_shards("clariq", "train", root=root, cache_dir=tmp_path, strategy="dense", n=5, seed=2)
    assert stub_encoder == [*encoded, 187]  # same bank: only the new split's requests are encoded
    assert json.loads((first / "manifest.json").read_text())["encoder"].startswith("all-MiniLM-L6-v2@")
    assert (tmp_path / shards.EMBEDDINGS).is_dir()


@pytest.mark.parametrize("strategy", ["native", "random", "bm25"])
def test_no_query_leaks_between_wikiqa_splits(tmp_path: Path, strategy: str) -> None:
    assert_no_leak("wikiqa", strategy, tmp_path)


@pytest.mark.parametrize("strategy", ["random", "bm25", "dense"])
def test_no_query_leaks_between_clariq_splits(tmp_path: Path, strategy: str, stub_encoder: list[int]) -> None:
    assert_no_leak("clariq", strategy, tmp_path)


def assert_no_leak(task: str, strategy: str, cache: Path) -> None:
    """Built shards of two splits share no qid and no query text."""
    root = tasks.data_root()
    built = {
        split: read_shards(build_shards(task, split, root=root, cache_dir=cache, strategy=strategy, n=10))
        for split in ("train", "dev", "test")
    }
    for one, other in [("train", "dev"), ("train", "test"), ("dev", "test")]:
        assert not set(built[one].column("qid").to_pylist()) & set(built[other].column("qid").to_pylist())
        contexts = [{tuple(c) for c in built[split].column("context").to_pylist()} for split in (one, other)]
        assert not contexts[0] & contexts[1]
    for split, table in built.items():
        sizes = pc.value_counts(table.column("qid")).field("counts").to_pylist()
        assert set(sizes) == {10}, split


def test_wikiqa_variant_without_nota(tmp_path: Path) -> None:
    path = build_shards(
        "wikiqa",
        "test",
        root=tasks.data_root(),
        cache_dir=tmp_path,
        strategy="bm25",
        variant="nota",
        include_nota=False,
    )
    table = read_shards(path)
    assert not any(table.column("nota").to_pylist())
    assert len(pc.unique(table.column("qid"))) == 243 - 243 // 2  # the answerable half


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategy": "tfidf"}, r"unknown negative-sampling strategy 'tfidf'"),
        ({"task": "clariq", "strategy": "native"}, r"clariq/dev has no native candidate lists"),
        ({"n": 0}, r"n is 0"),
        ({"variant": "hard"}, r"unknown variant 'hard'"),
    ],
)
def test_bad_list_settings(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    arguments = {"task": "wikiqa", "split": "dev"} | kwargs
    with pytest.raises(RankuqError, match=message):
        build_shards(**arguments, root=tasks.data_root(), cache_dir=tmp_path)  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())


def test_retrieved_lists_keep_what_bm25_ranks_and_carry_the_full_judgments(tmp_path: Path) -> None:
    """The retrieved variant (BEIR's reranking protocol): each WikiQA dev question's top 5 of BM25
    over the whole corpus as retrieved, nothing put in; qrels.parquet holds every judgment of the
    split, so relevant sentences BM25 missed still count against the lists."""
    from rankuq.contract import read_judgments
    from rankuq.tasks.negatives import BM25

    options = {"strategy": "bm25", "n": 5, "variant": "retrieved"}
    folder = build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=tmp_path, **options)
    lists, judgments = read_shards(folder), read_judgments(folder)
    pool = WikiQA().pool("dev", tasks.data_root())
    assert judgments is not None and judgments.num_rows == sum(len(judged) for judged in pool.judged)
    assert lists.group_by("qid").aggregate([("cid", "count")])["cid_count"].to_pylist() == [5] * len(
        pool.qids
    )
    top = BM25().candidates(pool, np.arange(len(pool.qids)), np.full(len(pool.qids), 5), 0)
    retrieved = {pool.qids[q]: {pool.cids[row] for row in rows} for q, rows in enumerate(top)}
    assert all(retrieved[qid] == set(cids) for qid, cids in _cids_by_query(lists).items())
    relevant = {(q, c) for q, c, label in zip(*judgments.to_pydict().values(), strict=True) if label > 0}
    listed = {
        (q, c)
        for q, c, label in zip(
            lists["qid"].to_pylist(), lists["cid"].to_pylist(), lists["label"].to_pylist(), strict=True
        )
        if label > 0
    }
    assert listed < relevant  # some relevant sentence is not in BM25's top 5, and none was put in
    assert read_judgments(build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=tmp_path)) is None


def _cids_by_query(table: pa.Table) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for qid, cid in zip(table["qid"].to_pylist(), table["cid"].to_pylist(), strict=True):
        found.setdefault(qid, []).append(cid)
    return found
