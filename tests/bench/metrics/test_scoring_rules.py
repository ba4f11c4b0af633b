"""Brier score and NLL (bench.metrics.scoring_rules): a worked 4-candidate example, scikit-learn's
values on real WikiQA, the calibration probe's keys from the same estimator, and the refusals."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from rankuq.bench import metrics
from rankuq.bench.metrics.matrix import ranked_lists
from rankuq.bench.predictions import predictions_table
from rankuq.bench.probes import calibration, scored_lists
from rankuq.errors import RankuqError

# q0: a graded relevant candidate (label 2) at 0.75, a non-relevant one at 0.25; q1: a relevant one
# at 0.0 (NLL clips it to ε) and a non-relevant one at 0.5. float32 holds every score exactly.
P, LABELS = [0.75, 0.25, 0.0, 0.5], [2, 0, 1, 0]


def worked(probabilistic: bool = True):
    scores = np.array(P)[:, None]
    return predictions_table(
        ["q0", "q0", "q1", "q1"], ["a", "b", "a", "b"], np.array(LABELS), scores, probabilistic
    )


def test_brier_and_nll_of_four_candidates_by_hand() -> None:
    """Brier = ((1 − 0.75)² + 0.25² + (1 − 0)² + 0.5²) / 4 = (1/16 + 1/16 + 1 + 1/4) / 4 = 11/32;
    NLL = (−log 0.75 − log(1 − 0.25) − log ε − log(1 − 0.5)) / 4, ε = float64's machine epsilon."""
    found = metrics.compute(worked(), ["Brier", "NLL"])
    assert found["Brier"] == pytest.approx(11 / 32, rel=1e-15)
    eps = np.finfo(np.float64).eps
    nll = (-2 * np.log(0.75) - np.log(eps) - np.log(0.5)) / 4
    assert found["NLL"] == pytest.approx(nll, rel=1e-15)
    y = np.array(LABELS) > 0
    assert found["Brier"] == pytest.approx(brier_score_loss(y, P), rel=1e-15)
    assert found["NLL"] == pytest.approx(log_loss(y, P), rel=1e-15)


def test_scikit_learn_s_values_on_real_wikiqa_and_the_probe_s_keys_are_the_same_estimator(wikiqa) -> None:
    """The leaderboard's query set (answerable WikiQA questions, 6,165 candidates scored by the
    stochastic stand-in): scikit-learn's brier_score_loss and log_loss, and the calibration probe's
    ``Brier`` and ``NLL`` (its per-query parts sum the same losses)."""
    found = metrics.compute(wikiqa, ["Brier", "NLL"], drop_queries_without_relevant=True)
    lists = ranked_lists(wikiqa)
    kept = lists.select(lists.n_relevant > 0)
    y, p = kept.row_labels > 0, kept.scores
    assert found["Brier"] == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert found["NLL"] == pytest.approx(log_loss(y, p), rel=1e-12)
    probe = calibration.probe(scored_lists(wikiqa).with_relevant()).metrics
    assert probe["Brier"] == pytest.approx(found["Brier"], rel=1e-12)
    assert probe["NLL"] == pytest.approx(found["NLL"], rel=1e-12)


@pytest.mark.parametrize("name", ["Brier", "NLL"])
def test_raw_scores_have_no_scoring_rule(name: str) -> None:
    with pytest.raises(
        RankuqError, match=r"scores are not probabilities .* so (the Brier score|NLL) is undefined"
    ):
        metrics.compute(worked(probabilistic=False), [name])
    outside = predictions_table(["q"], ["a"], np.array([1]), np.array([[1.5]]))
    with pytest.raises(RankuqError, match=r"score 1.5 is outside \[0, 1\]"):
        metrics.compute(outside, [name])
