"""Contract 1: required columns, the optional extra columns, contiguity."""

import pyarrow as pa
import pytest

from rankuq.contract import CANDIDATE_SCHEMA, EXTRA_COLUMNS, validate_candidates
from rankuq.errors import RankuqError


def table(**extra: pa.Array) -> pa.Table:
    columns = {
        "qid": ["q1", "q1", "q2"],
        "context": [["hi"], ["hi"], ["yo"]],
        "cid": ["a", "b", "c"],
        "text": ["x", "y", "z"],
        "label": [1, 0, 0],
        "task": ["t"] * 3,
        "split": ["dev"] * 3,
        "ns": ["bm25"] * 3,
        "nota": [False, False, True],
    }
    return pa.table(columns | extra)


def test_plain_table_gets_the_contract_schema() -> None:
    assert validate_candidates(table(), "t").schema == CANDIDATE_SCHEMA


def test_extra_column_kept_cast_and_nullable_unknown_dropped() -> None:
    out = validate_candidates(table(clarification_need=[2, 2, None], other=[1, 2, 3]), "t")
    assert out.schema.names == [*CANDIDATE_SCHEMA.names, "clarification_need"]
    assert out.schema.field("clarification_need").type == EXTRA_COLUMNS.field("clarification_need").type
    assert out.column("clarification_need").to_pylist() == [2, 2, None]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"clarification_need": ["a", "b", "c"]}, r"t: columns do not cast to contract 1"),
        ({"qid": ["q1", "q2", "q1"]}, r"t: row 2: rows of query 'q1' are not contiguous"),
        ({"cid": ["a", None, "c"]}, r"t: row 1: 'cid' is null"),
    ],
)
def test_errors(columns: dict[str, list], message: str) -> None:
    with pytest.raises(RankuqError, match=message):
        validate_candidates(table(**columns), "t")


def test_missing_column() -> None:
    with pytest.raises(RankuqError, match=r"t: missing candidate columns \['nota'\]"):
        validate_candidates(table().drop_columns(["nota"]), "t")
