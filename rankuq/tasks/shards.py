"""Candidate lists cached as Parquet shards, one folder per content hash of what produced them.

A folder ``<cache_dir>/<task>-<split>-<hash12>/`` holds ``part-00000.parquet …``, each a block of
whole queries (contract 1). It appears only complete: shards are written into a hidden temporary
sibling that is then renamed, so an interrupted build leaves no entry (at most a ``.…tmp-…``
folder, which lookups ignore and which is safe to delete).
"""

import hashlib
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rankuq import tasks
from rankuq.atomic import staged_folder
from rankuq.contract import JUDGMENTS, MANIFEST, PART, plain_name, validate_candidates
from rankuq.errors import RankuqError
from rankuq.tasks import negatives
from rankuq.tasks.base import require_files
from rankuq.tasks.embeddings import encoder_id
from rankuq.tasks.lists import build_lists, check_native, check_settings, resolve_n
from rankuq.tasks.pool import Pool

# Part of every cache key: bump it when a loader's output changes for the same source bytes.
SCHEMA_VERSION = "contract1-v3"  # v3: the manifest records each part's bytes
EMBEDDINGS = "embeddings"  # cache_dir subfolder of the dense strategy's encoded texts
logger = logging.getLogger(__name__)


# The settings are JSON values of mixed types (str, int, bool, None), read back by key.
ShardSettings = tuple["tasks.Task", dict[str, Any], list[Path]]


def _settings(
    task: str,
    split: str,
    root: Path,
    rows_per_shard: int = 2048,
    include_nota: bool = True,
    strategy: str | None = None,
    n: int | None = None,
    seed: int = 0,
    variant: str = "standard",
) -> ShardSettings:
    """The loader, the settings a folder's hash covers, and the source files (checked to exist).
    The defaults of ``build_shards``' options are these."""
    if not isinstance(rows_per_shard, int) or rows_per_shard < 1:
        raise RankuqError(f"rows_per_shard is {rows_per_shard!r}; set it to a positive integer")
    check_settings(n, seed, variant)
    loader = tasks.get(task)()
    strategy = strategy or loader.default_strategy(split)
    loader.check_split(split)
    check_native(strategy, split in loader.native_splits, f"{task}/{split}")  # before reading files
    settings: dict[str, Any] = {
        "task": task,
        "split": split,
        "strategy": strategy,
        "n": resolve_n(strategy, n, variant),
        "seed": seed,
        "variant": variant,
        "include_nota": include_nota,
        "rows_per_shard": rows_per_shard,
        "schema": SCHEMA_VERSION,
    }
    if strategy == "dense":
        settings["encoder"] = encoder_id()
    sampling = negatives.get(strategy)
    if sampling.version:  # left out at 0: other strategies keep their keys
        settings["strategy_version"] = sampling.version
    sources = [*loader.source_files(root, split), *sampling.files]
    require_files(sources)
    return loader, settings, sources


def shard_folder(task: str, split: str, *, root: Path, cache_dir: Path, **options: Any) -> Path:
    """The folder ``build_shards`` writes (or reuses) for the same arguments, without building it.
    Its name hashes the settings and the source files' bytes (so they are read, not written)."""
    _, settings, sources = _settings(task, split, Path(root), **options)
    return _target(Path(cache_dir), task, split, _cache_key(settings, sources, Path(root)))


def build_shards(task: str, split: str, *, root: Path, cache_dir: Path, **options: Any) -> Path:
    """Write ``task``/``split`` lists as Parquet shards under ``cache_dir`` (or reuse them); the folder.

    Options (keywords): ``strategy``, ``n``, ``seed`` (0) and ``variant`` ("standard") are those of
    ``tasks.lists.build_lists``: ``strategy=None`` means the task's native lists where it has them
    (else bm25) and ``n=None`` keeps native lists whole (10 candidates otherwise).
    ``include_nota=False`` (default True) drops lists with no relevant candidate, as ranking metrics
    do. A shard holds whole queries and at most ``rows_per_shard`` (2048) rows, unless one query is
    longer. The folder also holds ``manifest.json`` (the settings and counts). Any change of a
    setting or of a source file's bytes gives a new folder.
    """
    root, cache_dir = Path(root), Path(cache_dir)
    loader, settings, sources = _settings(task, split, root, **options)
    target = _target(cache_dir, task, split, _cache_key(settings, sources, root))
    if target.is_dir():
        broken = _damage(target)
        if broken is None:
            return target
        logger.warning("%s: cached shards %s; rebuilding them", target, broken)
        shutil.rmtree(target)
    pool = loader.pool(split, root)
    strategy, seed, variant = (settings[key] for key in ("strategy", "seed", "variant"))
    table = build_lists(
        pool, str(strategy), options.get("n"), int(seed), str(variant), cache_dir=cache_dir / EMBEDDINGS
    )
    if not settings["include_nota"]:
        table = table.filter(pc.invert(table.column("nota")))
    table = validate_candidates(table, f"{task}/{split}")
    judgments = _judgments(pool) if variant == "retrieved" else None
    manifest = settings | _counts(table, len(pool.qids))
    _publish(table, target, int(settings["rows_per_shard"]), manifest, judgments)
    return target


def _judgments(pool: Pool) -> pa.Table:
    """Every judgment of the split (qid, cid, label; a negative label as 0), as ir-measures reads
    qrels: what ``retrieved`` lists, which keep only what was retrieved, are measured against."""
    pairs = [(q, row, max(label, 0)) for q, judged in enumerate(pool.judged) for row, label in judged]
    queries, rows, labels = (np.array(column, np.int64) for column in zip(*pairs, strict=True))
    return pa.table(
        {
            "qid": pa.array(pool.qids, pa.string()).take(pa.array(queries)),
            "cid": pa.array(pool.cids, pa.string()).take(pa.array(rows)),
            "label": pa.array(labels.astype(np.int8)),
        }
    )


def _target(cache_dir: Path, task: str, split: str, key: str) -> Path:
    """A list folder's path. A family task's name ("beir/scifact", "parquet:/a/b.parquet") becomes
    one short, portable folder name; the key (over the whole name) keeps it unique."""
    return cache_dir / f"{plain_name(task)}-{split}-{key}"


def _cache_key(settings: dict[str, object], sources: list[Path], root: Path) -> str:
    """First 12 hex digits of a sha256 over the settings and the bytes of the source files.

    Files are named relative to ``root``, so moving the data folder keeps the cache valid (files
    outside it, a TREC run file, by their absolute path).
    """
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for path in sources:
        with path.open("rb") as handle:
            file_hash = hashlib.file_digest(handle, "sha256").hexdigest()
        name = path.relative_to(root) if path.is_relative_to(root) else path
        digest.update(f"\n{name.as_posix()} {file_hash}".encode())
    return digest.hexdigest()[:12]


def _counts(table: pa.Table, pool_queries: int) -> dict[str, int]:
    """What the manifest reports beside the settings: how much of the pool became lists."""
    qids = table.column("qid")
    nota_qids = pc.filter(qids, table.column("nota"))
    return {
        "pool_queries": pool_queries,
        "queries": len(pc.unique(qids)),
        "nota_queries": len(pc.unique(nota_qids)),
        "rows": table.num_rows,
    }


def _publish(
    table: pa.Table,
    target: Path,
    rows_per_shard: int,
    manifest: dict[str, object],
    judgments: pa.Table | None = None,
) -> None:
    """Write the shards, the judgments (where given) and the manifest into a temporary sibling
    folder, then rename it to ``target``; a concurrent build of the same key that published first
    wins (same inputs, same shards)."""
    with staged_folder(target, shared=True) as temp:
        qids = table.column("qid").to_numpy(zero_copy_only=False)
        sizes = {}
        for index, (start, stop) in enumerate(_shard_bounds(qids, rows_per_shard)):
            part = temp / PART.format(index)
            pq.write_table(table.slice(start, stop - start), part)
            sizes[part.name] = part.stat().st_size
        if judgments is not None:
            pq.write_table(judgments, temp / JUDGMENTS)
            manifest = manifest | {"judgments": judgments.num_rows}
        manifest = manifest | {"part_bytes": sizes}
        (temp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def _damage(folder: Path) -> str | None:
    """What is wrong with a cached shard folder (a part missing, cut short or unreadable, rows
    lost), or None when each part has its manifest's size, a readable Parquet footer and the
    manifest's row total."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        sizes: dict[str, int] = manifest["part_bytes"]
        rows = int(manifest["rows"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"have no readable manifest ({error!r})"
    present = sorted(path.name for path in folder.glob("part-*.parquet"))
    if present != sorted(sizes):
        return f"hold parts {present}, the manifest lists {sorted(sizes)}"
    total = 0
    for name, size in sizes.items():
        path = folder / name
        if path.stat().st_size != size:
            return f"have {name} of {path.stat().st_size} bytes, the manifest says {size}"
        try:
            total += pq.read_metadata(path).num_rows
        except (OSError, pa.ArrowException) as error:
            return f"have an unreadable {name} ({error})"
    if total != rows:
        return f"hold {total} rows, the manifest says {rows}"
    if "judgments" in manifest:
        try:
            judged = pq.read_metadata(folder / JUDGMENTS).num_rows
        except (OSError, pa.ArrowException) as error:
            return f"have no readable {JUDGMENTS} ({error})"
        if judged != manifest["judgments"]:
            return f"hold {judged} judgments, the manifest says {manifest['judgments']}"
    return None


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
