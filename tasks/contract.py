"""Contract 1: candidate lists, one row per (query, candidate), rows of a query contiguous."""

import pyarrow as pa

from bench.errors import RankuqError

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


def validate_candidates(table: pa.Table, source: str) -> pa.Table:
    """Check columns, types and contiguity; return the table cast to the contract schema."""
    missing = [name for name in CANDIDATE_SCHEMA.names if name not in table.column_names]
    if missing:
        raise RankuqError(f"{source}: missing candidate columns {missing}; expected {CANDIDATE_SCHEMA.names}")
    table = table.select(CANDIDATE_SCHEMA.names).cast(CANDIDATE_SCHEMA)
    qids = table.column("qid").to_pylist()
    seen: set[str] = set()
    for row, qid in enumerate(qids):
        if qid in seen and qids[row - 1] != qid:
            raise RankuqError(f"{source}: row {row}: rows of query '{qid}' are not contiguous; sort by qid")
        seen.add(qid)
    return table
