"""ECE: closed-form cases, bin boundaries, the table path and its refusals."""

from decimal import Decimal

import numpy as np
import pytest

from rankuq.bench import metrics
from rankuq.bench.metrics.ece import expected_calibration_error
from rankuq.bench.predictions import predictions_table
from rankuq.errors import RankuqError


def ece_of(scores: list[float], labels: list[int], qids: list[str] | None = None) -> float:
    """ECE through the public path: a predictions table and metrics.compute."""
    qids = qids or ["q"] * len(scores)
    table = predictions_table(
        qids, [f"c{i}" for i in range(len(scores))], np.array(labels), np.array(scores)[:, None]
    )
    return metrics.compute(table, ["ECE"])["ECE"]


@pytest.mark.parametrize(
    ("scores", "labels", "expected"),
    [
        ([0.75] * 4, [1, 1, 1, 0], 0.0),  # one bin, mean 0.75, 3/4 relevant
        ([0.0, 1.0, 1.0, 0.0], [0, 1, 1, 0], 0.0),  # perfect 0/1 predictions
        # bin 1: mean 0.15, 1/2 relevant; bin 8: mean 0.85, 2/2 relevant
        # → 2/4·0.35 + 2/4·0.15 (paper 000's code would divide this by 10 again)
        ([0.15, 0.15, 0.85, 0.85], [1, 0, 1, 1], 0.25),
        ([0.25] * 4, [2, 0, 0, 0], 0.0),  # graded labels: relevant means label > 0
        ([0.05, 0.1], [1, 0], (0.95 + 0.1) / 2),  # 0.1 opens bin 1: two bins
        ([0.95, 1.0], [1, 0], abs(1.95 - 1) / 2),  # 1.0 closes bin 9: one bin
        ([0.0, 0.3, 0.6], [0, 0, 1], (0.3 + 0.4) / 3),  # 0.0 in bin 0; 0.3 alone in bin 3
    ],
)
def test_closed_form_cases(scores: list[float], labels: list[int], expected: float) -> None:
    assert ece_of(scores, labels) == pytest.approx(expected, abs=1e-7)  # float32 samples


def test_matches_the_formula_with_decimal_bins() -> None:
    """Scores written with two decimals, many on bin edges: bin b is [b/10, (b+1)/10) read as
    decimals, 1.0 in bin 9; each bin weighs |avg − fraction relevant| by its size."""
    rng = np.random.default_rng(0)
    text = [f"{v / 100:.2f}" for v in rng.integers(0, 101, 500)]
    scores = np.array([float(t) for t in text])
    relevant = rng.random(scores.size) < scores
    bins = np.array([min(int(Decimal(t) * 10), 9) for t in text])
    expected = sum(
        (bins == b).sum() / scores.size * abs(scores[bins == b].mean() - relevant[bins == b].mean())
        for b in np.unique(bins)
    )
    assert expected_calibration_error(scores, relevant) == pytest.approx(expected, abs=1e-12)


def test_pooled_over_the_candidates_of_kept_queries() -> None:
    scores, labels = [0.2, 0.9, 0.4, 0.6], [0, 1, 0, 0]
    qids = ["a", "a", "b", "b"]
    assert ece_of(scores, labels, qids) == pytest.approx((0.2 + 0.1 + 0.4 + 0.6) / 4)  # four bins
    table = predictions_table(qids, ["c0", "c1", "c2", "c3"], np.array(labels), np.array(scores)[:, None])
    kept = metrics.compute(table, ["ECE"], drop_queries_without_relevant=True)["ECE"]
    assert kept == pytest.approx((0.2 + 0.1) / 2)  # query b has nothing relevant


def test_scores_outside_unit_interval_are_refused() -> None:
    table = predictions_table(["q", "q"], ["a", "b"], np.array([1, 0]), np.array([[0.2], [1.5]]))
    with pytest.raises(RankuqError, match=r"p.parquet: row 1 \(qid q\): score 1.5 is outside"):
        metrics.compute(table, ["AP", "ECE"], source="p.parquet")
    with pytest.raises(RankuqError, match="scores are not probabilities"):
        metrics.compute(table, ["ECE"])


def test_tables_flagged_non_probabilistic_are_refused() -> None:
    table = predictions_table(
        ["q", "q"], ["a", "b"], np.array([1, 0]), np.array([[0.2], [0.5]]), probabilistic=False
    )
    with pytest.raises(RankuqError, match=r"scores are not probabilities.*flagged"):
        metrics.compute(table, ["ECE"])


@pytest.mark.parametrize(
    ("score", "label", "message"),
    [
        (float("nan"), 0, r"row 1 \(qid q, cid b\): score is nan"),
        (0.5, -1, r"row 1 \(qid q, cid b\): label -1 is outside 0..127"),
    ],
)
def test_bad_rows_are_refused(score: float, label: int, message: str) -> None:
    table = predictions_table(["q", "q"], ["a", "b"], np.array([1, label]), np.array([[0.2], [score]]))
    with pytest.raises(RankuqError, match=message):
        metrics.compute(table, ["ECE"])
