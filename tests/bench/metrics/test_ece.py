"""ECE (paper 000's, balanced) and ECE.all (pooled): closed-form cases, bin boundaries, the table
path, the issue's bar through the CLI and the refusals."""

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from rankuq.bench import metrics
from rankuq.bench.cli.main import main
from rankuq.bench.metrics.ece import balanced_weights, expected_calibration_error
from rankuq.bench.predictions import predictions_table
from rankuq.errors import RankuqError


def ece_of(
    scores: list[float], labels: list[int], qids: list[str] | None = None, name: str = "ECE.all"
) -> float:
    """ECE through the public path: a predictions table and metrics.compute."""
    qids = qids or ["q"] * len(scores)
    table = predictions_table(
        qids, [f"c{i}" for i in range(len(scores))], np.array(labels), np.array(scores)[:, None]
    )
    return metrics.compute(table, [name])[name]


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


def test_balanced_ece_weighs_each_query_s_non_relevant_candidates_up_to_its_relevant_ones() -> None:
    """Paper 000's ECE. One query of 3 relevant at 0.75 and 1 non-relevant at 0.75: the
    non-relevant candidate weighs 3, so the bin holds 3 relevant of weight 6 and ECE = 0.75 − 0.5
    (pooled: 0, 3 of 4 relevant)."""
    assert ece_of([0.75] * 4, [1, 1, 1, 0], name="ECE") == pytest.approx(0.25, abs=1e-7)
    assert ece_of([0.75] * 4, [1, 1, 1, 0]) == pytest.approx(0.0, abs=1e-7)
    # a: relevant 0.9, non-relevant 0.2 and 0.4 (weight ½ each); b: relevant 0.6, non-relevant
    # 0.3; c: nothing relevant (weight 0). Every row alone in its bin: Σ |w·(s − o)| / Σ w =
    # (0.1 + 0.1 + 0.2 + 0.4 + 0.3) / 4; pooled: (0.1 + 0.2 + 0.4 + 0.4 + 0.3 + 1.0) / 7.
    scores, labels = [0.9, 0.2, 0.4, 0.6, 0.3, 0.5, 0.5], [1, 0, 0, 2, 0, 0, 0]
    qids = ["a", "a", "a", "b", "b", "c", "c"]
    assert ece_of(scores, labels, qids, "ECE") == pytest.approx(1.1 / 4, abs=1e-7)
    assert ece_of(scores, labels, qids) == pytest.approx(2.4 / 7, abs=1e-7)
    weights = balanced_weights(np.array([0, 0, 0, 1, 1, 2, 2]), np.array(labels) > 0)
    np.testing.assert_array_equal(weights, [1, 0.5, 0.5, 1, 1, 0, 0])


def test_balanced_ece_needs_a_query_with_both_kinds() -> None:
    table = predictions_table(["q", "q"], ["a", "b"], np.array([1, 1]), np.array([[0.2], [0.5]]))
    with pytest.raises(RankuqError, match=r"no query has both a relevant and a non-relevant.*use ECE.all"):
        metrics.compute(table, ["ECE"])


def test_the_bar_calibrated_at_a_balanced_prior_through_the_cli(tmp_path: Path, capsys) -> None:
    """The issue's bar: p ~ U(0, 1), relevance ~ Bernoulli(p), lists of 1 relevant and 9
    non-relevant candidates. Balanced, P(relevant | p) = p: ECE small. Pooled, P(relevant | p) =
    p / (p + 9(1 − p)): ECE.all large."""
    rng = np.random.default_rng(0)
    n_lists = 2000
    p = rng.random(40 * n_lists)
    relevant = rng.random(p.size) < p
    positive, negative = p[relevant][:n_lists], p[~relevant][: 9 * n_lists]
    scores = np.concatenate([positive[:, None], negative.reshape(n_lists, 9)], axis=1)
    labels = np.zeros(scores.shape, dtype=int)
    labels[:, 0] = 1
    qids = np.repeat([f"q{i}" for i in range(n_lists)], 10).tolist()
    cids = [f"c{j}" for _ in range(n_lists) for j in range(10)]
    path = tmp_path / "p.parquet"
    pq.write_table(predictions_table(qids, cids, labels.ravel(), scores.reshape(-1, 1)), path)
    assert main(["evaluate", "--predictions", str(path), "--calibration", "--json"]) == 0
    values = json.loads(capsys.readouterr().out)
    assert values["ECE"] <= 0.06 and values["ECE.all"] >= 0.2


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
