"""ScoredLists: rank order, padding, draws, refusals; the helpers every probe shares."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from rankuq.bench import metrics
from rankuq.bench.predictions import predictions_table
from rankuq.bench.probes import ProbeResult, scored_lists
from rankuq.bench.probes.base import key, merge, split_queries, top_k
from rankuq.errors import RankuqError


def test_matrices_follow_the_metrics_rank_order(lists_table) -> None:
    """prob_mean descending, ties by cid descending (c1 before c0), shorter lists 0-padded."""
    table = lists_table(
        [[0, 1, 0], [1, 0]],
        [[[0.5, 0.5], [0.5, 0.5], [0.9, 0.7]], [[0.2, 0.4], [0.1, 0.1]]],
    )
    lists = scored_lists(table)
    assert lists.qids.tolist() == ["q0", "q1"]
    np.testing.assert_array_equal(lists.length, [3, 2])
    np.testing.assert_allclose(lists.scores, [[0.8, 0.5, 0.5], [0.3, 0.1, 0.0]], atol=1e-7)
    np.testing.assert_array_equal(lists.ranked.labels, [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(lists.mask, [[True, True, True], [True, True, False]])
    assert lists.n_samples == 2
    assert lists.samples is not None
    np.testing.assert_allclose(lists.samples[0, 0], [0.9, 0.7], atol=1e-7)
    np.testing.assert_allclose(lists.variance()[1], [0.01, 0.0, 0.0], atol=1e-7)


def test_a_single_draw_is_a_deterministic_ranker(scores_table) -> None:
    lists = scored_lists(scores_table([[1, 0]], [[0.7, 0.2]]))
    assert lists.samples is None and lists.n_samples == 1
    np.testing.assert_array_equal(lists.variance(), [[0.0, 0.0]])


def test_per_query_reorders_the_labels_it_is_given(scores_table) -> None:
    table = scores_table([[0, 1, 0], [1, 0]], [[0.9, 0.5, 0.1], [0.8, 0.3]])
    lists = scored_lists(table)
    assert lists.per_query(["AP"])["AP"].tolist() == metrics.per_query(table, ["AP"])[1]["AP"].tolist()
    swapped = np.array([[1, 0, 2], [0, 1, 2]])
    assert lists.per_query(["RR"], swapped)["RR"].tolist() == [1.0, 1.0]


def test_select_and_with_relevant(scores_table) -> None:
    lists = scored_lists(scores_table([[0, 0], [1, 0], [0, 1]], [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]))
    kept = lists.with_relevant()
    assert kept.qids.tolist() == ["q1", "q2"] and kept.scores.shape == (2, 2)
    assert lists.select(np.array([2])).qids.tolist() == ["q2"]
    with pytest.raises(RankuqError, match="no query has a relevant candidate"):
        lists.select(np.array([0])).with_relevant()


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("samples", [0.1, float("nan")], r"row 1 \(qid q0, cid c1\): a sample is not finite"),
        ("samples", [0.1, float("inf")], r"row 1 \(qid q0, cid c1\): a sample is not finite"),
        ("samples", [0.1], r"row 1 \(qid q0\): 1 samples \(row 0 has 2\); every row needs the same"),
        ("prob_mean", float("nan"), r"row 1 \(qid q0, cid c1\): score is nan"),
        ("label", 0.5, r"p.parquet: column label holds double, not integers"),
        ("label", -1, r"row 1 \(qid q0, cid c1\): label -1 is outside 0..127"),
    ],
)
def test_bad_rows_are_refused(column: str, value: object, message: str) -> None:
    table = predictions_table(
        ["q0", "q0"], ["c0", "c1"], np.array([1, 0]), np.array([[0.2, 0.4], [0.1, 0.3]])
    )
    values = table[column].to_pylist()
    values[1] = value
    kind = pa.float64() if column == "label" and isinstance(value, float) else table.schema.field(column).type
    table = table.set_column(table.schema.get_field_index(column), column, pa.array(values, kind))
    with pytest.raises(RankuqError, match=message):
        scored_lists(table, "p.parquet")


def test_top_k_repeats_the_last_candidate_of_short_lists() -> None:
    matrix = np.array([[3.0, 2.0, 1.0], [5.0, 0.0, 0.0]])
    np.testing.assert_array_equal(top_k(matrix, np.array([3, 1]), 4), [[3, 2, 1, 1], [5, 5, 5, 5]])


def test_splits_are_80_20_and_seeded() -> None:
    reference, test = split_queries(23, seed=3)
    assert (reference.size, test.size) == (19, 4)
    assert sorted([*reference, *test]) == list(range(23))
    assert np.array_equal(test, split_queries(23, seed=3)[1])
    assert not np.array_equal(test, split_queries(23, seed=4)[1])


def _write_subject(path: Path, subject: str) -> Path:
    path.write_bytes(subject.encode())
    return path


def test_keys_and_merging(tmp_path: Path) -> None:
    assert key("nDCG@10") == "nDCG_at_10" and key("AP") == "AP"
    first = ProbeResult({"a": 1.0}, notes=("x",))
    second = ProbeResult(
        {"b": 2.0},
        plots={"p": _write_subject},
        notes=("y",),
    )
    merged = merge([first, second])
    assert merged.metrics == {"a": 1.0, "b": 2.0} and merged.notes == ("x", "y")
    assert merged.write_plots(tmp_path, "cell-", "bm25 × wikiqa seed 0") == [tmp_path / "cell-p.png"]
    assert (tmp_path / "cell-p.png").read_text() == "bm25 × wikiqa seed 0"  # the subject reaches the draw
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cell-p.png"]  # no temporary left
    with pytest.raises(ValueError, match=r"produced twice: \['a'\]"):
        merge([first, first])
