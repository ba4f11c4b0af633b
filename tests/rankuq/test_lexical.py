"""`lexical`: BM25 scores and a top-k whose order is one total order (score, then row)."""

import numpy as np
import pytest

from rankuq.lexical import BM25Index, top_rows


def by_definition(scores: np.ndarray, k: int) -> list[int]:
    """Independent of numpy's selection: Python's sort on (−score, row)."""
    return sorted(range(len(scores)), key=lambda row: (-scores[row], row))[:k]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_rows_orders_equal_scores_by_row(seed: int) -> None:
    scores = np.random.default_rng(seed).integers(0, 4, size=40).astype(np.float32)  # ties everywhere
    for k in range(len(scores) + 3):
        assert top_rows(scores, k).tolist() == by_definition(scores, k)


def test_a_larger_k_only_appends_rows() -> None:
    scores = np.repeat(np.array([3.0, 1.0, 2.0], dtype=np.float32), 5)
    assert top_rows(scores, 12)[:7].tolist() == top_rows(scores, 7).tolist()
    assert top_rows(scores, 0).dtype == np.int64 and top_rows(scores, 0).size == 0


def test_index_scores_every_text_and_stop_words_score_zero() -> None:
    index = BM25Index(["red apples are sweet", "green pears", "the red car is fast"])
    scores = index.scores("sweet red apples")
    assert scores.shape == (3,) and scores[0] > scores[2] > scores[1] == 0
    assert not index.scores("the and of").any()
