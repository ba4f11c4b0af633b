"""The contrasts that ``paired_bootstrap`` runs vectorised over its replicates.

Contrasts built with ``Contrast`` (``difference``, ``relative``, ``over_best``, ``value``) take the
sides' values with any later axes (replicates) carried along. The statistics a side is measured with
are the probes' vocabulary (``bench.statistics.parts``: ``SumStatistic``, ``BatchStatistic``, ``mean``,
``ratio_of_means``, the registered ``STATISTICS``): those run vectorised too; any other callable runs
in a loop, on the same resampled indices (the numbers agree to rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


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
        return np.asarray(v[side] - others.max(axis=0))

    return Contrast(function, f"v{side} − max of the others")


def value(side: int = 0) -> Contrast:
    """d = v[side] itself (a value against a floor: ``judge(..., "at least", margin=floor)``)."""
    return Contrast(lambda v: v[side], f"v{side}")
