"""Confidence functions of the abstention probe: reference-free ones by hand, minus the variance of a
stochastic ranker's draws, and the learners fitted on a reference set."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from rankuq.bench.probes import scored_lists
from rankuq.bench.probes.confidence import NotFittable, fit_confidence, free_confidence, sorted_scores
from rankuq.errors import RankuqError


def test_reference_free_confidences_by_hand(scores_table) -> None:
    lists = scored_lists(scores_table([[1, 0, 0], [0, 1]], [[0.2, 0.9, 0.4], [0.6, 0.1]]))
    np.testing.assert_allclose(free_confidence(lists, "u_max"), [0.9, 0.6])
    np.testing.assert_allclose(free_confidence(lists, "u_1-2"), [0.5, 0.5])
    np.testing.assert_allclose(
        free_confidence(lists, "u_std"), [float(np.std([0.2, 0.9, 0.4])), 0.25]
    )  # real candidates only
    np.testing.assert_allclose(sorted_scores(lists, 4), [[0.2, 0.2, 0.4, 0.9], [0.1, 0.1, 0.1, 0.6]])
    with pytest.raises(RankuqError, match="u_mean_var needs S > 1 draws"):
        free_confidence(lists, "u_mean_var")
    with pytest.raises(
        RankuqError, match="unknown confidence function 'u_foo'; valid: u_max, u_std, u_1-2, u_lin"
    ):
        free_confidence(lists, "u_foo")


def test_uncertainty_confidences_are_minus_the_variance(lists_table) -> None:
    lists = scored_lists(lists_table([[1, 0]], [[[0.9, 0.5], [0.2, 0.2]]]))
    assert free_confidence(lists, "u_top_var").tolist() == pytest.approx([-0.04])
    assert free_confidence(lists, "u_mean_var").tolist() == pytest.approx([-0.02])


def test_u_lin_is_ridge_with_lambda_0_1_on_the_sorted_scores():
    rng = np.random.default_rng(0)
    features, target = rng.random((40, 4)), rng.random(40)
    expected = Ridge(alpha=0.1).fit(features, target).predict(features)
    np.testing.assert_allclose(fit_confidence("u_lin", features, target)(features), expected)


def test_u_log_and_u_mah_rank_a_good_instance_above_a_bad_one():
    # The metric grows with the first sorted score: good instances have high scores, bad ones low.
    rng = np.random.default_rng(1)
    features = rng.random((60, 3))
    target = features[:, 0] + 0.05 * rng.random(60)
    good, bad = np.array([[0.95, 0.5, 0.5]]), np.array([[0.05, 0.5, 0.5]])
    for name in ("u_log", "u_mah"):
        confidence = fit_confidence(name, features, target)
        assert confidence(good)[0] > confidence(bad)[0], name
    assert -1 <= fit_confidence("u_log", features, target)(good)[0] <= 1  # P(good) − P(bad)


def test_a_reference_without_spread_has_no_good_and_bad_instances():
    features = np.random.default_rng(2).random((20, 3))
    with pytest.raises(NotFittable, match=r"no spread between their quartiles \(0.5 and 0.5\)"):
        fit_confidence("u_log", features, np.full(20, 0.5))
    with pytest.raises(RankuqError, match="unknown data-driven confidence 'u_max'; valid: u_lin, u_log"):
        fit_confidence("u_max", features, np.linspace(0, 1, 20))
