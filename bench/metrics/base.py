"""The metric-family registry and the helpers every metric file shares."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from rankuq.registry import Registry, first_paragraph

Cutoff = Literal["required", "optional", "none"]
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Family:
    """A metric family such as ``nDCG``: ``fn(lists[, k])`` on a ``RankedLists``.

    ``pooled`` families return one float over all candidate rows (ECE); the others return one
    value per query, which callers average.
    """

    name: str
    fn: Callable[..., Any]
    cutoff: Cutoff
    pooled: bool

    @property
    def spelling(self) -> str:
        """How a name of the family is written: ``nDCG[@k]``, ``P@k``, ``RR``."""
        return {"required": "{}@k", "optional": "{}[@k]", "none": "{}"}[self.cutoff].format(self.name)

    @property
    def description(self) -> str:
        """Its function's docstring's first paragraph: the definition."""
        return first_paragraph(self.fn.__doc__)


FAMILIES: Registry[Family] = Registry("metric")


def family(name: str, *, cutoff: Cutoff, pooled: bool = False) -> Callable[[F], F]:
    """Register the decorated function as metric family ``name``; the function stays plain."""

    def add(fn: F) -> F:
        FAMILIES.register(Family(name, fn, cutoff, pooled))
        return fn

    return add


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (a query with nothing relevant)."""
    out = np.zeros(np.shape(numerator), dtype=np.float64)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)
