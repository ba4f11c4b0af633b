"""A predictions table as padded [queries × candidates] label matrices, ranked as trec_eval ranks."""

import re

import numpy as np
import pyarrow as pa
import pytest

from rankuq.bench.metrics.matrix import pad_by_query, ranked_lists
from rankuq.bench.predictions import predictions_table
from rankuq.errors import RankuqError


def test_lists_are_ranked_by_score_padded_and_keep_their_source_rows(worked):
    # conftest.py's rows: q1 ranks a b c d (rows 3 8 5 1), q2 a b c (rows 4 0 7), q3 a b (rows 2 6).
    assert worked.qids.tolist() == ["q1", "q2", "q3"]
    assert worked.labels.tolist() == [[0, 1, 0, 1], [2, 0, 1, 0], [0, 0, 0, 0]]
    assert worked.ideal.tolist() == [[1, 1, 0, 0], [2, 1, 0, 0], [0, 0, 0, 0]]
    assert worked.n_relevant.tolist() == [2, 2, 0]
    assert worked.rows.tolist() == [3, 8, 5, 1, 4, 0, 7, 2, 6]
    assert worked.row_query.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2]
    expected = np.float32([0.9, 0.8, 0.7, 0.6, 0.9, 0.5, 0.1, 0.3, 0.2])  # the mean of one float32 draw
    assert worked.scores.tolist() == expected.astype(np.float64).tolist()
    assert worked.row_labels.tolist() == [0, 1, 0, 1, 2, 0, 1, 0, 0]


def test_selected_queries_keep_their_rows_renumbered(worked):
    kept = worked.select(np.array([True, False, True]))
    assert kept.qids.tolist() == ["q1", "q3"] and kept.n_relevant.tolist() == [2, 0]
    assert kept.rows.tolist() == [3, 8, 5, 1, 2, 6] and kept.row_query.tolist() == [0, 0, 0, 0, 1, 1]


def test_tied_scores_rank_by_cid_descending_and_minus_zero_ties_zero():
    table = predictions_table(
        ["q", "q", "q", "q", "r", "r"],
        ["a", "c", "b", "z", "d9", "d10"],
        np.array([1, 2, 3, 4, 5, 6]),
        np.array([[0.5], [0.5], [0.5], [0.9], [0.0], [-0.0]]),
    )
    assert ranked_lists(table).labels.tolist() == [[4, 2, 3, 1], [5, 6, 0, 0]]  # z; c, b, a; d9, d10


def test_qrels_set_the_queries_and_the_relevant_counts():
    table = predictions_table(
        ["q1", "q1", "q9"], ["a", "b", "x"], np.array([0, 1, 0]), np.array([[0.9], [0.1], [0.5]])
    )
    qrels = pa.table(
        {"qid": ["q1", "q1", "q1", "q2"], "cid": ["a", "b", "missed", "y"], "label": [0, 1, 2, 1]}
    )
    lists = ranked_lists(table, qrels=qrels)
    assert lists.qids.tolist() == ["q1", "q2"]  # q9 is not judged: left out; q2 is not retrieved
    assert lists.labels.tolist() == [[0, 1], [0, 0]]  # the ranked rows' labels; q2: an empty list
    # The ideal ranking and the relevant counts are the qrels': "missed" counts though not retrieved.
    assert lists.ideal.tolist() == [[2, 1, 0], [1, 0, 0]] and lists.n_relevant.tolist() == [2, 1]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (predictions_table([], [], np.zeros(0), np.zeros((0, 1))), "p: no rows; a predictions table needs"),
        (
            predictions_table(["q"], ["a"], np.array([-1]), np.array([[0.5]])),
            "p: row 0 (qid q, cid a): label -1 is outside 0..127",
        ),
    ],
)
def test_a_table_that_cannot_be_ranked_is_refused(table, message):
    with pytest.raises(RankuqError, match=re.escape(message)):
        ranked_lists(table, source="p")


def test_pad_by_query_fills_each_query_s_row_in_order():
    values = np.array([10, 11, 12, 20, 30, 31])
    assert pad_by_query(np.array([0, 0, 0, 1, 2, 2]), values, 3).tolist() == [
        [10, 11, 12],
        [20, 0, 0],
        [30, 31, 0],
    ]
    assert pad_by_query(np.array([0, 0, 1, 1]), values[:4], 2).tolist() == [[10, 11], [12, 20]]
