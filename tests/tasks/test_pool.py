"""PoolBuilder: corpus rows by cid, queries with judgments and aligned extra columns."""

from pathlib import Path

import pytest

from rankuq.errors import RankuqError
from rankuq.tasks.pool import PoolBuilder


def test_builder_collects_queries_corpus_and_extras() -> None:
    builder = PoolBuilder("t", "dev", Path("f.tsv"), native=False)
    a, b = builder.candidate("a", "text a"), builder.candidate("b", "text b")
    assert builder.candidate("a", "another text") == a and "a" in builder and builder.row("b") == b
    builder.query("q1", ["hello"], {a: 2})
    builder.query("q2", ["bye"], {b: 1, a: 0}, clarification_need=3)
    pool = builder.build()
    assert pool.cids == ["a", "b"] and pool.texts == ["text a", "text b"]  # the first text stays
    assert pool.judged == [[(a, 2)], [(b, 1), (a, 0)]]
    assert pool.extras == {"clarification_need": [None, 3]}


def test_unknown_extra_column_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="'difficulty' is not one of the contract's extra columns"):
        PoolBuilder("t", "dev", Path("f.tsv"), native=False).query("q", ["x"], {}, difficulty=1)


def test_no_queries() -> None:
    with pytest.raises(RankuqError, match=r"f\.tsv: no queries for split dev"):
        PoolBuilder("t", "dev", Path("f.tsv"), native=True).build()
