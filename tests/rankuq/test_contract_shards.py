"""Reading a candidate-list shard folder (contract 1), and the portable names folders take."""

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rankuq import tasks
from rankuq.contract import CANDIDATE_SCHEMA, plain_name, read_shards, shard_files
from rankuq.errors import RankuqError


@pytest.fixture(scope="module")
def dev() -> pa.Table:
    """The rows of the first two questions of real WikiQA dev."""
    rows = tasks.get("wikiqa")().load("dev", tasks.data_root())
    return rows.filter(pc.is_in(rows["qid"], pa.array(rows["qid"].unique()[:2])))


def test_a_shard_folder_reads_back_as_its_parts_in_order(dev, tmp_path):
    half = dev.num_rows // 2
    pq.write_table(dev.slice(half), tmp_path / "part-00001.parquet")
    pq.write_table(dev.slice(0, half), tmp_path / "part-00000.parquet")
    (tmp_path / "manifest.json").write_text("{}")
    assert [path.name for path in shard_files(tmp_path)] == ["part-00000.parquet", "part-00001.parquet"]
    table = read_shards(tmp_path)
    assert table.schema.names[: len(CANDIDATE_SCHEMA)] == CANDIDATE_SCHEMA.names
    assert table["cid"].to_pylist() == dev["cid"].to_pylist()


def test_a_folder_without_parts_or_with_a_broken_part_is_one_error_saying_what_to_do(tmp_path):
    with pytest.raises(RankuqError, match=r"no shard folder with part-\*.parquet files; build it"):
        shard_files(tmp_path)
    (tmp_path / "part-00000.parquet").write_bytes(b"cut short")
    with pytest.raises(RankuqError, match=r"unreadable shards \(.*\); delete the folder so build_"):
        read_shards(tmp_path)


@pytest.mark.parametrize(
    ("name", "plain"),
    [
        ("wikiqa", "wikiqa"),
        ("beir/scifact", "beir+scifact"),
        ("parquet:/data/my runs/a.parquet", "parquet+data+my+runs+a.parquet"),
        ("wikiqa:bm25→clariq", "wikiqa+bm25+clariq"),
        ("/leading and trailing/", "leading+and+trailing"),
    ],
)
def test_a_name_becomes_one_portable_file_name(name, plain):
    assert plain_name(name) == plain


def test_a_long_name_keeps_its_start_and_end_within_the_limit():
    long = "parquet:/" + "x" * 60 + "/tested.parquet"
    assert plain_name(long) == "parquet+xxxxxxxx+xxxxxxxxxxxxxxxx+tested.parquet"
    assert len(plain_name(long)) == 48 and len(plain_name(long, "_", 200)) == len(long) - 1


def test_a_folder_s_rows_are_its_manifest_s_count(tmp_path):
    """What the scoring bar's total reads (issue 48: rows read "0/?" and then jumped)."""
    from rankuq import tasks
    from rankuq.contract import read_shards, shard_rows
    from rankuq.tasks.shards import build_shards

    folder = build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=tmp_path, strategy="bm25", n=3)
    assert shard_rows(folder) == read_shards(folder).num_rows > 0
    assert shard_rows(tmp_path / "nothing-here") is None
