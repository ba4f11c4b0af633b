"""Candidate lists cached as Parquet shards, one folder per content hash of what produced them.

A folder ``<cache_dir>/<task>-<split>-<hash12>/`` holds ``part-00000.parquet …``, each a run of
whole queries (contract 1). It appears only complete: shards are written into a hidden temporary
sibling that is then renamed, so an interrupted build leaves no entry (at most a ``.…tmp-…``
folder, which lookups ignore and which is safe to delete).
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import tasks
from bench.errors import RankuqError
from tasks.base import require_files
from tasks.contract import validate_candidates

# Part of every cache key: bump it when a loader's output changes for the same source bytes.
SCHEMA_VERSION = "contract1-v1"
PART = "part-{:05d}.parquet"


def build_shards(
    task: str,
    split: str,
    *,
    root: Path,
    cache_dir: Path,
    rows_per_shard: int = 2048,
    include_nota: bool = True,
) -> Path:
    """Write ``task``/``split`` as Parquet shards under ``cache_dir`` (or reuse them); the folder.

    ``include_nota=False`` drops queries with no relevant candidate, as ranking metrics do.
    A shard holds whole queries and at most ``rows_per_shard`` rows, unless one query is longer.
    """
    if not isinstance(rows_per_shard, int) or rows_per_shard < 1:
        raise RankuqError(f"rows_per_shard is {rows_per_shard!r}; set it to a positive integer")
    root, cache_dir = Path(root), Path(cache_dir)
    loader = tasks.get(task)()
    sources = loader.source_files(root, split)
    require_files(sources)
    key = _cache_key(
        task, split, sources, root, include_nota=include_nota, rows_per_shard=rows_per_shard
    )
    target = cache_dir / f"{task}-{split}-{key}"
    if target.is_dir():
        return target
    table = loader.load(split, root)
    if not include_nota:
        table = table.filter(pc.invert(table.column("nota")))
    _publish(table, target, rows_per_shard)
    return target


def _cache_key(
    task: str,
    split: str,
    sources: list[Path],
    root: Path,
    *,
    include_nota: bool,
    rows_per_shard: int,
) -> str:
    """First 12 hex digits of a sha256 over the settings and the bytes of the source files.

    Files are named relative to ``root``, so moving the data folder keeps the cache valid.
    """
    settings = {
        "task": task,
        "split": split,
        "include_nota": include_nota,
        "rows_per_shard": rows_per_shard,
        "schema": SCHEMA_VERSION,
    }
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for path in sources:
        with path.open("rb") as handle:
            file_hash = hashlib.file_digest(handle, "sha256").hexdigest()
        digest.update(f"\n{path.relative_to(root).as_posix()} {file_hash}".encode())
    return digest.hexdigest()[:12]


def read_shards(path: Path) -> pa.Table:
    """The candidate table stored in a shard folder, validated against contract 1."""
    parts = sorted(Path(path).glob("part-*.parquet"))
    if not parts:
        raise RankuqError(
            f"{path}: no shard folder with part-*.parquet files; build it with build_shards"
        )
    try:
        table = pa.concat_tables([pq.read_table(part) for part in parts])
    except (OSError, pa.ArrowException) as exc:
        raise RankuqError(
            f"{path}: unreadable shards ({exc}); delete the folder so build_shards rebuilds it"
        ) from exc
    return validate_candidates(table, str(path))


def _publish(table: pa.Table, target: Path, rows_per_shard: int) -> None:
    """Write the shards into a temporary sibling folder, then rename it to ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        qids = table.column("qid").to_numpy(zero_copy_only=False)
        for index, (start, stop) in enumerate(_shard_bounds(qids, rows_per_shard)):
            pq.write_table(table.slice(start, stop - start), temp / PART.format(index))
        os.replace(temp, target)
    except OSError:
        if not target.is_dir():
            raise
        # A concurrent build published the same key first: same inputs, same shards.
    finally:
        shutil.rmtree(temp, ignore_errors=True)  # no-op once renamed


def _shard_bounds(qids: np.ndarray, rows_per_shard: int) -> list[tuple[int, int]]:
    """Row ranges that cut only between queries; always at least one (empty for no rows)."""
    ends = [*(np.flatnonzero(qids[1:] != qids[:-1]) + 1).tolist(), len(qids)]
    bounds: list[tuple[int, int]] = []
    begin = previous = 0
    for end in ends:
        if end - begin > rows_per_shard and previous > begin:
            bounds.append((begin, previous))
            begin = previous
        previous = end
    bounds.append((begin, len(qids)))
    return bounds
