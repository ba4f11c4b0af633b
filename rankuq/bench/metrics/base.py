"""The metric-family registry and the helpers every metric file shares.

A family's facts are declared once, on its ``@family`` line: how it takes a cutoff, whether it pools
the candidates, its kind (a ranking metric, a calibration error or a proper scoring rule) and which
way is better. Every list of names the rest of the bench keeps (the leaderboard's columns, the
paired tests, Tune's ``mode``, early stopping's best epoch) is derived from them (``bench.metrics``).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from rankuq.registry import Registry, first_paragraph

Cutoff = Literal["required", "optional", "none"]
Kind = Literal["ranking", "calibration", "scoring rule"]
KINDS: tuple[Kind, ...] = ("ranking", "calibration", "scoring rule")  # the order lists of names follow
Better = Literal["higher", "lower"]
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Family:
    """A metric family such as ``nDCG``: ``fn(lists[, k])`` on a ``RankedLists``.

    ``pooled`` families return one float over all candidate rows (ECE); the others return one
    value per query, which callers average. ``kind`` and ``better`` say what it measures and which
    way is better; ``probe`` names the probe that measures it where the predictions table cannot
    (ERCE compares each draw's scores: ``fn`` then only refuses and documents it).
    """

    name: str
    fn: Callable[..., Any]
    cutoff: Cutoff
    pooled: bool
    kind: Kind = "ranking"
    better: Better = "higher"
    probe: str | None = None

    @property
    def lower_is_better(self) -> bool:
        return self.better == "lower"

    @property
    def spelling(self) -> str:
        """How a name of the family is written: ``nDCG[@k]``, ``P@k``, ``RR``."""
        return {"required": "{}@k", "optional": "{}[@k]", "none": "{}"}[self.cutoff].format(self.name)

    @property
    def description(self) -> str:
        """Its function's docstring's first paragraph: the definition."""
        return first_paragraph(self.fn.__doc__)


FAMILIES: Registry[Family] = Registry("metric")


def family(
    name: str,
    *,
    cutoff: Cutoff,
    pooled: bool = False,
    kind: Kind = "ranking",
    better: Better = "higher",
    probe: str | None = None,
) -> Callable[[F], F]:
    """Register the decorated function as metric family ``name`` with its facts; the function stays
    plain."""

    def add(fn: F) -> F:
        FAMILIES.register(Family(name, fn, cutoff, pooled, kind, better, probe))
        return fn

    return add


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (a query with nothing relevant)."""
    out = np.zeros(np.shape(numerator), dtype=np.float64)
    return np.asarray(np.divide(numerator, denominator, out=out, where=denominator > 0))
