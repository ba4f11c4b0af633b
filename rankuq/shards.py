"""Reading candidate-list shard folders (contract 1): what tasks/ writes and methods/ and bench/ read.

A folder holds ``part-00000.parquet …`` (runs of whole queries) and ``manifest.json``;
``rankuq.tasks.shards.build_shards`` writes them. Lists of the ``retrieved`` variant also hold
``qrels.parquet``: the split's judgments (qid, cid, label), which they are measured against.
"""

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rankuq.contract import validate_candidates
from rankuq.errors import RankuqError

PART = "part-{:05d}.parquet"
MANIFEST = "manifest.json"
JUDGMENTS = "qrels.parquet"


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


def read_judgments(path: Path) -> pa.Table | None:
    """The judgments (qid, cid, label) a shard folder's lists are measured against, or None where
    its lists are measured against their own labels (every variant but ``retrieved``)."""
    file = Path(path) / JUDGMENTS
    if not file.is_file():
        return None
    try:
        return pq.read_table(file)
    except (OSError, pa.ArrowException) as exc:
        raise RankuqError(
            f"{file}: unreadable judgments ({exc}); delete the folder so build_shards rebuilds it"
        ) from exc


def plain_name(name: str, joiner: str = "+", limit: int = 48) -> str:
    """``name`` as one portable folder or file name: a family task's "beir/scifact" or
    "parquet:/a/b.parquet", a shift's "wikiqa:bm25→clariq". Runs of other characters than letters,
    digits, '.', '-' and '_' become ``joiner``; a long name keeps its start and end. Callers add a
    content key where two names could meet."""
    plain = re.sub(r"[^\w.-]+", joiner, name).strip(joiner)
    return plain if len(plain) <= limit else f"{plain[:16]}{joiner}{plain[-(limit - 17) :]}"
