"""Evaluation metrics over the predictions table, registered by name (``bench.metrics.get("ECE")``).

Names are spelled as ir-measures spells them: ``P@k``, ``R@k``, ``AP[@k]``, ``RR``,
``nDCG[@k]``, plus ``ECE``. Ranking metrics equal ir-measures (pytrec_eval) per query; see
``matrix`` for the tie rule and the query set.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pyarrow as pa

from rankuq.bench.metrics import ap, ece, ndcg, precision, recall, rr  # noqa: F401  (they register)
from rankuq.bench.metrics.base import FAMILIES, Family
from rankuq.bench.metrics.matrix import RankedLists, ranked_lists
from rankuq.errors import RankuqError

__all__ = ["DEFAULT_METRICS", "FAMILIES", "Metric", "compute", "get", "per_query"]

DEFAULT_METRICS = ("R@1", "R@5", "P@1", "AP", "RR", "nDCG@10")
_SPELLING = {"required": "{}@k", "optional": "{}[@k]", "none": "{}"}


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a family and its cutoff, e.g. ``nDCG@10`` → (nDCG, 10)."""

    name: str
    family: Family
    k: int | None

    def __call__(self, lists: RankedLists) -> np.ndarray | float:
        return self.family.fn(lists) if self.k is None else self.family.fn(lists, self.k)

    def by_query(self, lists: RankedLists) -> np.ndarray:
        """The value of each query: what ``__call__`` gives for a family that is not pooled (the
        return type follows ``family.pooled``, which a type checker cannot see)."""
        return cast(np.ndarray, self(lists))


def get(name: str) -> Metric:
    """Parse ``name`` (``family`` or ``family@k``); unknown names list the valid families."""
    family_name, at, cutoff = name.partition("@")
    if family_name not in FAMILIES:
        valid = ", ".join(_SPELLING[FAMILIES.get(f).cutoff].format(f) for f in FAMILIES)
        raise RankuqError(f"unknown metric '{name}'; valid metric families: {valid}")
    family = FAMILIES.get(family_name)
    if at and family.cutoff == "none":
        raise RankuqError(f"metric '{name}': {family_name} takes no cutoff; write '{family_name}'")
    if not at and family.cutoff == "required":
        raise RankuqError(f"metric '{name}' needs a cutoff, e.g. '{family_name}@10'")
    if at and not (cutoff.isdigit() and int(cutoff) > 0):
        raise RankuqError(f"metric '{name}': the cutoff must be a positive integer, e.g. '@10'")
    return Metric(name, family, int(cutoff) if at else None)


def per_query(
    table: pa.Table,
    names: Sequence[str],
    *,
    qrels: pa.Table | None = None,
    drop_queries_without_relevant: bool = False,
    source: str = "predictions",
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per-query values of ranking metrics, aligned with the returned qids (sorted).

    ``qrels`` and the query set are as in ``matrix.ranked_lists``; with
    ``drop_queries_without_relevant`` queries with no relevant judged candidate are left out.
    """
    metrics = [get(name) for name in names]
    pooled = [m.name for m in metrics if m.family.pooled]
    if pooled:
        raise RankuqError(f"metrics {pooled} pool all candidates and have no per-query value; use compute()")
    lists = _lists(table, qrels, drop_queries_without_relevant, source)
    return lists.qids, {m.name: m.by_query(lists) for m in metrics}


def compute(
    table: pa.Table,
    names: Sequence[str],
    *,
    qrels: pa.Table | None = None,
    drop_queries_without_relevant: bool = False,
    source: str = "predictions",
) -> dict[str, float]:
    """Each metric's mean over queries; pooled metrics (ECE) over the queries' candidate rows."""
    metrics = [get(name) for name in names]
    lists = _lists(table, qrels, drop_queries_without_relevant, source)
    return {m.name: float(np.mean(m(lists))) for m in metrics}


def _lists(
    table: pa.Table, qrels: pa.Table | None, drop_queries_without_relevant: bool, source: str
) -> RankedLists:
    lists = ranked_lists(table, qrels=qrels, source=source)
    if drop_queries_without_relevant:
        lists = lists.select(lists.n_relevant > 0)
        if lists.qids.size == 0:
            raise RankuqError(
                f"{source}: no query has a relevant candidate, so none is left to evaluate; "
                "check the labels or keep queries without relevant candidates"
            )
    return lists
