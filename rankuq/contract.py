"""Contract 1: candidate lists, one row per (query, candidate), rows of a query contiguous."""

import numpy as np
import pyarrow as pa

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
