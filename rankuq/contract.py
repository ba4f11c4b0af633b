"""Contract 1: candidate lists, one row per (query, candidate), rows of a query contiguous; and the
shard folders that hold them, which rankuq/tasks/ writes and rankuq/methods/ and rankuq/bench/ read.

A folder holds ``part-00000.parquet …`` (runs of whole queries) and ``manifest.json``;
``rankuq.tasks.shards.build_shards`` writes them. Lists of the ``retrieved`` variant also hold
``qrels.parquet``: the split's judgments (qid, cid, label), which they are measured against.
"""

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq.errors import RankuqError

CANDIDATE_SCHEMA = pa.schema(
    [
        ("qid", pa.string()),
        ("context", pa.list_(pa.string())),  # dialogue turns; one element for a plain query
        ("cid", pa.string()),
        ("text", pa.string()),
        ("label", pa.int8()),  # graded relevance, 0 = non-relevant
        ("task", pa.string()),
        ("split", pa.string()),
        ("ns", pa.string()),  # negative-sampling strategy that produced the list
        ("nota", pa.bool_()),  # the list holds no relevant candidate
    ]
)

# Optional per-query columns: kept after the required ones when a task provides them, may be null.
EXTRA_COLUMNS = pa.schema(
    [
        ("clarification_need", pa.int8()),  # ClariQ: 1 (answer now) … 4 (must ask first)
    ]
)


def validate_candidates(table: pa.Table, source: str) -> pa.Table:
    """Check columns, types, nulls and contiguity; return the table cast to the contract schema.

    Extra columns of ``EXTRA_COLUMNS`` that are present are kept (cast, nulls allowed); any other
    column is dropped.
    """
    expected = CANDIDATE_SCHEMA.names
    missing = [name for name in expected if name not in table.column_names]
    if missing:
        raise RankuqError(f"{source}: missing candidate columns {missing}; expected {expected}")
    extras = [field for field in EXTRA_COLUMNS if field.name in table.column_names]
    schema = pa.schema([*CANDIDATE_SCHEMA, *extras])
    try:
        table = table.select(schema.names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise RankuqError(f"{source}: columns do not cast to contract 1 ({exc}); fix their types") from exc
    for name in expected:
        column = table.column(name)
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise RankuqError(f"{source}: row {row}: '{name}' is null; every field must be set")
    _check_contiguous(table.column("qid").to_numpy(zero_copy_only=False), source)
    return table


def _check_contiguous(qids: np.ndarray, source: str) -> None:
    """Each qid must form one run of rows: a qid that starts two runs is split."""
    if not qids.size:
        return
    seen: set[str] = set()
    for row in np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]]):
        qid = qids[row]
        if qid in seen:
            raise RankuqError(
                f"{source}: row {row}: rows of query '{qid}' are not contiguous; group them by qid"
            )
        seen.add(qid)


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


def shard_rows(path: Path) -> int | None:
    """The rows a shard folder holds, as its manifest counts them (None where it cannot be read)."""
    try:
        return int(json.loads((Path(path) / MANIFEST).read_text())["rows"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
