"""The sides of a comparison (bench.findings.sides): aligned by query, and the condition without
shift a shift is measured against."""

import numpy as np

from rankuq.bench.findings.sides import aligned, no_shift_condition
from rankuq.bench.statistics.parts import QueryParts


def test_the_sides_are_aligned_by_query_in_the_first_side_s_order():
    mine = {0: QueryParts(np.array(["a", "b", "c"]), np.array([[1.0], [2.0], [3.0]]), "mean")}
    theirs = {0: QueryParts(np.array(["c", "a", "x"]), np.array([[30.0], [10.0], [99.0]]), "mean")}
    rows, names = aligned([mine, theirs])
    assert names == ["mean", "mean"]
    np.testing.assert_array_equal(rows[0][0][:, 0], [1.0, 3.0])  # a and c, the queries both have
    np.testing.assert_array_equal(rows[1][0][:, 0], [10.0, 30.0])
    assert aligned([mine, {1: theirs[0]}]) is None  # a seed missing on one side


def test_the_no_shift_condition_tests_the_same_task_in_domain(run_of, values):
    run = run_of(
        {("plain", "bert", "AP"): [values(0.7, 0.1, 0)], ("shifted", "bert", "AP"): [values(0.6, 0.1, 1)]},
        kinds={"plain": ("in-domain", "standard"), "shifted": ("cross-domain", "standard")},
    )
    assert no_shift_condition(run, "shifted") == "plain"


def test_the_no_shift_reference_tests_the_same_negatives_and_the_source_trains_alike(run_of, values):
    """A cross-NS condition's reference is the model trained with the tested negatives (not the one
    with the training side's); where the ranker was trained is the in-domain condition of its training
    side."""
    from rankuq.bench.config.grid import Side
    from rankuq.bench.findings.sides import source_condition

    kinds = {c: ("in-domain", "standard") for c in ("bm25", "dense")} | {
        "bm25-to-dense": ("cross-NS", "standard")
    }
    run = run_of({(c, "bert", "AP"): [values(0.5, 0.1, 0)] for c in kinds}, kinds=kinds)
    run.tested.update(
        {"bm25": ("clariq", "bm25"), "dense": ("clariq", "dense"), "bm25-to-dense": ("clariq", "dense")}
    )
    run.trained.update({c: Side(task="clariq", ns="dense" if c == "dense" else "bm25") for c in kinds})
    assert no_shift_condition(run, "bm25-to-dense") == "dense"
    assert source_condition(run, "bm25-to-dense") == "bm25" and source_condition(run, "dense") == "dense"
    del run.kinds["dense"]
    assert no_shift_condition(run, "bm25-to-dense") is None
