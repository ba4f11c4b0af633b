"""Paired t-tests per query (or per fold) and mean ± std over seeds.

Papers 000 and 001 mark a method's improvement over a baseline with a paired Student's t-test at
95 %; ``paired_ttest`` runs it on per-query metric values (``bench.metrics.per_query``).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from scipy import stats

from rankuq.bench import metrics
from rankuq.errors import RankuqError

TOLERANCE = 1e-12  # differences closer than this (relative) are rounding, not a difference


@dataclass(frozen=True)
class TTest:
    """A paired t-test of ``a − b``: statistic, two-sided p-value, mean difference, pairs."""

    t: float
    p: float
    mean_difference: float
    n: int


def paired_t(a: np.ndarray, b: np.ndarray) -> TTest:
    """Paired Student's t-test (``scipy.stats.ttest_rel``) of a against b, two-sided.

    When every difference is equal (within ``TOLERANCE`` of the largest |a|, |b| or 1: rounding),
    the t statistic is undefined (zero variance): no difference gives t = 0, p = 1 (no evidence),
    a constant non-zero shift t = ±inf, p = 0.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.size < 2:
        raise RankuqError(
            f"a paired t-test needs two equally long samples of 2 or more, got {a.size} and {b.size}"
        )
    difference = a - b
    mean = float(difference.mean())
    tolerance = TOLERANCE * max(1.0, float(np.abs(a).max()), float(np.abs(b).max()))
    if np.ptp(difference) <= tolerance:
        if abs(mean) <= tolerance:
            return TTest(0.0, 1.0, mean, a.size)
        return TTest(float(np.copysign(np.inf, mean)), 0.0, mean, a.size)
    result = stats.ttest_rel(a, b)
    return TTest(float(result.statistic), float(result.pvalue), mean, a.size)


def paired_ttest(
    predictions: pa.Table,
    baseline: pa.Table,
    metric: str = "AP",
    *,
    drop_queries_without_relevant: bool = True,
) -> TTest:
    """Paired t-test per query of ``metric`` between a method's and a baseline's predictions.

    Both tables must hold the same queries (after dropping those without a relevant candidate,
    as the leaderboard does); a query missing from one is an error naming it.
    """
    qids, values = metrics.per_query(
        predictions, [metric], drop_queries_without_relevant=drop_queries_without_relevant
    )
    base_qids, base_values = metrics.per_query(
        baseline, [metric], drop_queries_without_relevant=drop_queries_without_relevant, source="baseline"
    )
    if not np.array_equal(qids, base_qids):
        only = sorted(set(qids.tolist()) ^ set(base_qids.tolist()))
        raise RankuqError(
            f"the predictions and the baseline rank different queries ({len(only)} in one only, e.g. "
            f"qid {only[0]}); score both methods on the same split"
        )
    return paired_t(values[metric], base_values[metric])


def mean_std(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; 0 for one value), as the leaderboard."""
    array = np.asarray(values, np.float64)
    return float(array.mean()), float(array.std(ddof=1)) if array.size > 1 else 0.0
