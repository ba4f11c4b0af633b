"""Confidence functions u(z) of Gisserot-Boukhlef et al. (2024) over a query's relevance scores z:
high u, rank; low u,
abstain. Reference-free heuristics (§3.1), learners fitted on a reference set of sorted score
vectors and metric values (§3.2, appendix D) and, for stochastic rankers, the draws' variance.
"""

import warnings
from collections.abc import Callable
from typing import cast

import numpy as np

from rankuq.bench.probes.base import ScoredLists, top_k
from rankuq.errors import RankuqError

REFERENCE_FREE = ("u_max", "u_std", "u_1-2")
DATA_DRIVEN = ("u_lin", "u_log", "u_mah", "u_rf", "u_mlp")
UNCERTAINTY = ("u_mean_var", "u_top_var")  # stochastic rankers only (S > 1)
K = 10  # sorted scores per query fed to the learners (Gisserot-Boukhlef et al., 2024 reranks 10 candidates)
REGULARISATION = 0.1  # λ of u_lin (ridge) and u_log (l2 logistic regression)
QUALIFICATION = 0.25  # u_log, u_mah: the top / bottom quarter by metric are good / bad instances

Confidence = Callable[[np.ndarray], np.ndarray]


class NotFittable(RankuqError):
    """A learner that the reference set cannot define (e.g. no spread of metric values)."""


def free_confidence(lists: ScoredLists, name: str) -> np.ndarray:
    """A confidence that needs no reference set, per query of ``lists``.

    u_max = max_j z_j; u_std = the population standard deviation of the query's scores;
    u_1-2 = z_(1) − z_(2), the gap between the two highest scores (needs 2 candidates);
    u_mean_var = −mean_j var[R_j] and u_top_var = −var[R_top] (the top-ranked candidate), from
    the S draws: more variance, less confidence.
    """
    scores, mask, length = lists.scores, lists.mask, lists.length
    if name == "u_max":
        return scores[:, 0]
    if name == "u_std":
        mean = scores.sum(axis=1, keepdims=True) / length[:, None]  # padding holds 0
        centred = np.where(mask, scores - mean, 0)
        return np.asarray(np.sqrt((centred**2).sum(axis=1) / length))
    if name == "u_1-2":
        if np.any(length < 2):
            raise RankuqError(
                f"{lists.ranked.source}: u_1-2 needs 2 candidates per query; drop one-candidate queries"
            )
        return np.asarray(scores[:, 0] - scores[:, 1])
    if name in UNCERTAINTY:
        if lists.samples is None:
            raise RankuqError(
                f"{lists.ranked.source}: {name} needs S > 1 draws per candidate; the table has one"
            )
        variance = lists.variance()
        return -variance[:, 0] if name == "u_top_var" else -(variance * mask).sum(axis=1) / length
    valid = ", ".join(REFERENCE_FREE + DATA_DRIVEN + UNCERTAINTY)
    raise RankuqError(f"unknown confidence function '{name}'; valid: {valid}")


def sorted_scores(lists: ScoredLists, k: int = K) -> np.ndarray:
    """The learners' input s(z): a query's top-k scores in increasing order (Gisserot-Boukhlef et al.,
    2024, eq. 3);
    a list shorter than k repeats its lowest score (``top_k``)."""
    return top_k(lists.scores, lists.length, k)[:, ::-1]


def fit_confidence(name: str, features: np.ndarray, target: np.ndarray, seed: int = 0) -> Confidence:
    """Fit a data-driven confidence on a reference set: sorted scores [N, k] → metric value [N].

    u_lin: ridge regression, λ = 0.1. u_rf: random forest regressor, 100 trees, squared error.
    u_mlp: MLP regressor, one hidden layer of 128 ReLU units, Adam at learning rate 0.05 on the
    whole set per step, 500 steps (inputs standardised so that rate suits any score scale).
    u_log: l2 logistic regression (λ = 0.1, C = 1/λ) over good (metric ≥ its 75th percentile),
    bad (≤ 25th) and neutral instances; u = P(good) − P(bad). u_mah: Mahalanobis distance to
    the bad instances minus that to the good ones (pseudo-inverse covariance).
    ``seed`` seeds the forest and the MLP.
    """
    from sklearn.linear_model import LogisticRegression, Ridge

    if name == "u_lin":
        return cast(Confidence, Ridge(alpha=REGULARISATION).fit(features, target).predict)
    if name == "u_rf":
        from sklearn.ensemble import RandomForestRegressor

        forest = RandomForestRegressor(
            n_estimators=100, criterion="squared_error", random_state=seed, n_jobs=1
        )
        return cast(Confidence, forest.fit(features, target).predict)
    if name == "u_mlp":
        return _mlp(features, target, seed)
    good, bad = _qualified(target)
    if name == "u_log":
        classes = good.astype(int) - bad.astype(int)
        model = LogisticRegression(C=1 / REGULARISATION, max_iter=1000).fit(features, classes)
        return lambda x: model.predict_proba(x) @ model.classes_.astype(np.float64)  # P(good) − P(bad)
    if name == "u_mah":
        to_bad, to_good = _mahalanobis(features[bad]), _mahalanobis(features[good])
        return lambda x: to_bad(x) - to_good(x)
    raise RankuqError(f"unknown data-driven confidence '{name}'; valid: {', '.join(DATA_DRIVEN)}")


def _qualified(target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Good and bad instances: metric ≥ its upper and ≤ its lower QUALIFICATION quantile; ties
    stay together, and equal quantiles (no spread) leave the classes undefined."""
    low, high = np.quantile(target, [QUALIFICATION, 1 - QUALIFICATION])
    good, bad = target >= high, target <= low
    if low == high or good.sum() < 2 or bad.sum() < 2:
        raise NotFittable(
            f"the reference metric values have no spread between their quartiles ({low} and {high}), "
            "so good and bad instances are undefined"
        )
    return good, bad


def _mahalanobis(group: np.ndarray) -> Confidence:
    """δ(z, Z) = (z − μ_Z) Σ_Z⁻¹ (z − μ_Z)ᵀ for each row z."""
    centre, inverse = group.mean(axis=0), np.linalg.pinv(np.cov(group, rowvar=False))
    return lambda x: np.einsum("ij,jk,ik->i", x - centre, inverse, x - centre)


def _mlp(features: np.ndarray, target: np.ndarray, seed: int) -> Confidence:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    network = MLPRegressor(
        hidden_layer_sizes=(128,),
        learning_rate_init=0.05,
        batch_size=len(features),
        max_iter=500,
        n_iter_no_change=500,  # always the 500 steps of the paper, no early stop
        random_state=seed,
    )
    model = make_pipeline(StandardScaler(), network)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the fixed step count is the protocol
        model.fit(features, target)
    return cast(Confidence, model.predict)
