"""Proper scoring rules of every candidate's P(relevant) against its 0/1 relevance (label > 0), each
the mean over every candidate row of the evaluated queries:

- ``Brier``: the Brier score (Brier, 1950), mean (p − y)², as scikit-learn's ``brier_score_loss``;
- ``NLL``: the negative log-likelihood (log loss), mean −[y log p + (1 − y) log(1 − p)], p clipped to
  [ε, 1 − ε] with ε = float64's machine epsilon, as scikit-learn's ``log_loss``.

The calibration probe's per-query parts of both (``bench.probes.calibration``) sum these same losses.
"""

from collections.abc import Callable

import numpy as np

from rankuq.bench.metrics.base import family
from rankuq.bench.metrics.ece import check_probabilities
from rankuq.bench.metrics.matrix import RankedLists

EPSILON = float(np.finfo(np.float64).eps)  # NLL's clipping of p, as scikit-learn's log_loss


def brier_losses(lists: RankedLists) -> np.ndarray:
    """(p − y)² of each candidate row (Brier, 1950)."""
    check_probabilities(lists, "the Brier score")
    return (lists.scores - (lists.row_labels > 0)) ** 2


def log_losses(lists: RankedLists) -> np.ndarray:
    """−log p of each relevant candidate row, −log(1 − p) of the others, p clipped to [ε, 1 − ε]."""
    check_probabilities(lists, "NLL")
    clipped = np.clip(lists.scores, EPSILON, 1 - EPSILON)
    return np.asarray(-np.where(lists.row_labels > 0, np.log(clipped), np.log1p(-clipped)))


LOSSES: dict[str, Callable[[RankedLists], np.ndarray]] = {"Brier": brier_losses, "NLL": log_losses}


@family("Brier", cutoff="none", pooled=True, kind="scoring rule", better="lower")
def brier(lists: RankedLists) -> float:
    """The Brier score (Brier, 1950): mean (p − y)² over every candidate row; relevant = label > 0."""
    return float(brier_losses(lists).mean())


@family("NLL", cutoff="none", pooled=True, kind="scoring rule", better="lower")
def nll(lists: RankedLists) -> float:
    """The negative log-likelihood: mean −[y log p + (1 − y) log(1 − p)] over every candidate row,
    p clipped as scikit-learn's ``log_loss``; relevant = label > 0."""
    return float(log_losses(lists).mean())
