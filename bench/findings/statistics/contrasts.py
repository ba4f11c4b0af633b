"""The statistics and contrasts that ``paired_bootstrap`` runs vectorised over its replicates.

Statistics that are functions of the rows' column sums (``SumStatistic``: ``mean``,
``ratio_of_means``, a pooled ECE from per-query bin sums), statistics that take a stack of resamples
(``BatchStatistic``: nAUC written over a leading axis) and contrasts built with ``Contrast``
(``difference``, ``relative``, ``over_best``, ``value``) run vectorised over the replicates; any
other callable runs in a loop, on the same resampled indices (the numbers agree to rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Statistic = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class SumStatistic:
    """A statistic that depends on the rows only through their column sums and their number:
    ``function(sums, n)`` with ``sums`` of shape ``(..., k)`` (a leading axis of replicates) returns
    shape ``(...)``. A bootstrap resample is then a weight vector (how often each query was drawn),
    and every replicate's sums are one matrix product. Calling it on rows gives the plain value."""

    function: Callable[[np.ndarray, int], np.ndarray]
    name: str = "statistic of sums"

    def __call__(self, rows: np.ndarray) -> float:
        rows = np.asarray(rows, dtype=float)
        return float(self.function(rows.sum(axis=0), len(rows)))


def mean(column: int = 0) -> SumStatistic:
    """The mean of one column over the queries (a per-query metric: parts ``(n, 1)``)."""
    return SumStatistic(lambda sums, n: sums[..., column] / n, f"mean of column {column}")


def ratio_of_means(numerator: int = 0, denominator: int = 1) -> SumStatistic:
    """mean(column ``numerator``) / mean(column ``denominator``) = the ratio of their sums."""
    return SumStatistic(
        lambda sums, n: sums[..., numerator] / sums[..., denominator],
        f"ratio of columns {numerator} / {denominator}",
    )


@dataclass(frozen=True)
class BatchStatistic:
    """A statistic that needs the rows themselves (nAUC, a rank correlation) but takes a stack of
    resamples at once: ``function(rows)`` with ``rows`` of shape ``(..., n, k)`` returns shape
    ``(...)``, so the replicates cost a few array operations instead of a Python call each.
    Calling it on one seed's rows ``(n, k)`` gives the plain value."""

    function: Callable[[np.ndarray], np.ndarray]
    name: str = "batched statistic"

    def __call__(self, rows: np.ndarray) -> float:
        rows = np.asarray(rows, dtype=float)
        return float(np.asarray(self.function(rows[None]))[0])


@dataclass(frozen=True)
class Contrast:
    """A contrast that also takes a batch: ``function(values)`` with the sides on axis 0 and any
    later axes (replicates) carried along, e.g. ``lambda v: v[0] - v[1:].max(axis=0)``."""

    function: Callable[[np.ndarray], np.ndarray]
    name: str = "contrast"

    def __call__(self, values: np.ndarray) -> float:
        return float(self.function(np.asarray(values, dtype=float)))


def difference(side: int = 0, reference: int = 1) -> Contrast:
    """d = v[side] − v[reference]."""
    return Contrast(lambda v: v[side] - v[reference], f"v{side} − v{reference}")


def relative(side: int = 0, reference: int = 1) -> Contrast:
    """d = (v[side] − v[reference]) / |v[reference]| (a relative effect, as a fraction)."""
    name = f"(v{side} − v{reference}) / |v{reference}|"
    return Contrast(lambda v: (v[side] - v[reference]) / np.abs(v[reference]), name)


def over_best(side: int = 0) -> Contrast:
    """d = v[side] − the best (largest) of the other sides."""

    def function(v: np.ndarray) -> np.ndarray:
        others = np.delete(v, side, axis=0)
        return v[side] - others.max(axis=0)

    return Contrast(function, f"v{side} − max of the others")


def value(side: int = 0) -> Contrast:
    """d = v[side] itself (a value against a floor: ``judge(..., "at least", margin=floor)``)."""
    return Contrast(lambda v: v[side], f"v{side}")
