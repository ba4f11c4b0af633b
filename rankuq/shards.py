"""Reading candidate-list shard folders (contract 1): what tasks/ writes and methods/ and bench/ read.

A folder holds ``part-00000.parquet …`` (runs of whole queries) and ``manifest.json``;
``rankuq.tasks.shards.build_shards`` writes them.
"""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rankuq.contract import validate_candidates
from rankuq.errors import RankuqError

PART = "part-{:05d}.parquet"
MANIFEST = "manifest.json"


def shard_files(path: Path) -> list[Path]:
    """The Parquet parts of a shard folder, in order (the folder also holds the manifest)."""
    parts = sorted(Path(path).glob("part-*.parquet"))
    if not parts:
        raise RankuqError(f"{path}: no shard folder with part-*.parquet files; build it with build_shards")
    return parts


def read_shards(path: Path) -> pa.Table:
    """The candidate table stored in a shard folder, validated against contract 1."""
    parts = shard_files(path)
    try:
        table = pa.concat_tables([pq.read_table(part) for part in parts])
    except (OSError, pa.ArrowException) as exc:
        raise RankuqError(
            f"{path}: unreadable shards ({exc}); delete the folder so build_shards rebuilds it"
        ) from exc
    return validate_candidates(table, str(path))
