"""Evaluation metrics over the predictions table, registered by name (``bench.metrics.get("ECE")``).

Names are spelled as ir-measures spells them: ``P@k``, ``R@k``, ``AP[@k]``, ``RR``,
``nDCG[@k]``, plus ``ECE`` and the scoring rules ``Brier`` and ``NLL`` (``scoring_rules``). Ranking
metrics equal ir-measures (pytrec_eval) per query; see ``matrix`` for the tie rule and the query set.
Any other measure ir-measures computes (``RR@10``, ``P(rel=2)@10``, ``Judged@10``, ``ERR@20``,
``Rprec``) is delegated to it (``delegated``). ``ERCE`` is declared here and measured by the
calibration probe.

Each family's kind and direction are declared on it (``base.family``); the lists below and
``lower_is_better`` are derived from those declarations, not written again.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pyarrow as pa
from ir_measures.measures import Measure

from rankuq.bench.metrics import (  # noqa: F401  (they register)
    ap,
    delegated,
    ece,
    erce,
    ndcg,
    precision,
    recall,
    rr,
    scoring_rules,
)
from rankuq.bench.metrics.base import FAMILIES, KINDS, Family, Kind
from rankuq.bench.metrics.matrix import RankedLists, ranked_lists
from rankuq.errors import RankuqError

__all__ = [
    "CALIBRATION_ERRORS",
    "DEFAULT_METRICS",
    "FAMILIES",
    "FROM_PROBABILITIES",
    "Metric",
    "compute",
    "get",
    "lower_is_better",
    "of_kind",
    "per_query",
]

# The ranking metrics `evaluate`, `compare` and the leaderboard show unless told otherwise.
DEFAULT_METRICS = ("R@1", "R@5", "P@1", "AP", "RR", "nDCG@10")


def of_kind(*kinds: Kind, probed: bool = True) -> tuple[str, ...]:
    """The families of ``kinds``, kind by kind in ``KINDS``' order and by name within one; without
    ``probed``, only those a predictions table gives (not ERCE, the calibration probe's)."""
    return tuple(
        name
        for kind in KINDS
        if kind in kinds
        for name in FAMILIES.names()
        if FAMILIES.get(name).kind == kind and (probed or FAMILIES.get(name).probe is None)
    )


# The calibration errors and scoring rules (lower is better): ECE, ECE.all, ERCE, Brier, NLL
CALIBRATION_ERRORS = of_kind("calibration", "scoring rule")
# Those a predictions table of probabilities gives: ECE, ECE.all, Brier, NLL
FROM_PROBABILITIES = of_kind("calibration", "scoring rule", probed=False)


def lower_is_better(name: str) -> bool:
    """Whether a lower value of metric ``name`` is better, as its family declares: a board's column
    (``ECE``, ``Brier``) or a probe's variant of a family (``ECE.adaptive``, ``ECE.nonrel_5``: ECE's);
    any other name (``R@1``, ``RA AP``, an ir-measures measure) is better higher."""
    for family_name in (name.partition("@")[0], name.partition(".")[0]):
        if family_name in FAMILIES:
            return FAMILIES.get(family_name).lower_is_better
    return False


_DELEGATED_EXAMPLES = "RR@10, P(rel=2)@10, Judged@10, ERR@20, Rprec"


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a family and its cutoff, e.g. ``nDCG@10`` → (nDCG, 10); or an
    ir-measures ``measure`` the core does not compute (``compute`` and ``per_query`` delegate it)."""

    name: str
    family: Family
    k: int | None
    measure: Measure | None = None

    @property
    def lower_is_better(self) -> bool:
        return self.family.lower_is_better

    def __call__(self, lists: RankedLists) -> np.ndarray | float:
        if self.measure is not None:  # its provider needs the cids and the qrels, not label matrices
            raise RankuqError(
                f"metric '{self.name}' is ir-measures'; compute it with metrics.compute or per_query"
            )
        value = self.family.fn(lists) if self.k is None else self.family.fn(lists, self.k)
        return cast(np.ndarray | float, value)

    def by_query(self, lists: RankedLists) -> np.ndarray:
        """The value of each query: what ``__call__`` gives for a family that is not pooled (the
        return type follows ``family.pooled``, which a type checker cannot see)."""
        return cast(np.ndarray, self(lists))


def get(name: str) -> Metric:
    """Parse ``name`` (``family`` or ``family@k``), or delegate a measure the core lacks to
    ir-measures; unknown names list the valid families."""
    family_name, at, cutoff = name.partition("@")
    family = FAMILIES.get(family_name) if family_name in FAMILIES else None
    if family is None or (at and family.cutoff == "none"):  # RR@10: the core has RR without a cutoff
        return _delegated(name)
    if family.probe is not None:
        raise RankuqError(
            f"metric '{name}' is measured by the {family.probe} probe (on the leaderboard with "
            f"{family.probe} in eval.probes), not from a predictions table; choose one of "
            f"{', '.join(DEFAULT_METRICS + FROM_PROBABILITIES)}"
        )
    if not at and family.cutoff == "required":
        raise RankuqError(f"metric '{name}' needs a cutoff, e.g. '{family_name}@10'")
    if at and not (cutoff.isdigit() and int(cutoff) > 0):
        raise RankuqError(f"metric '{name}': the cutoff must be a positive integer, e.g. '@10'")
    return Metric(name, family, int(cutoff) if at else None)


def _delegated(name: str) -> Metric:
    """An ir-measures measure that an installed provider computes and the core does not."""
    measure = delegated.parse(name)
    if measure is None:
        valid = ", ".join(FAMILIES.get(f).spelling for f in FAMILIES if FAMILIES.get(f).probe is None)
        raise RankuqError(
            f"unknown metric '{name}'; valid metric families: {valid}, or a measure of ir-measures "
            f"(e.g. {_DELEGATED_EXAMPLES})"
        )
    if str(measure) != name and str(measure).partition("@")[0] in FAMILIES:  # an alias: MAP is AP
        raise RankuqError(f"metric '{name}': write '{measure}', ir-measures' own name for it")
    cutoff = measure.params.get("cutoff")
    if not delegated.computable(measure) or (isinstance(cutoff, int) and cutoff <= 0):
        raise RankuqError(
            f"metric '{name}': no installed ir-measures provider computes it as written; check its "
            f"cutoff and parameters (e.g. {_DELEGATED_EXAMPLES})"
        )
    family = Family(str(measure.NAME), delegated.per_query, "optional", pooled=False)
    return Metric(name, family, None, measure)


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
    return lists.qids, _by_query(metrics, lists, table, qrels)


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
    core = {m.name: float(np.mean(m(lists))) for m in metrics if m.measure is None}
    outside = [m for m in metrics if m.measure is not None]
    values = _by_query(outside, lists, table, qrels)
    return {m.name: core[m.name] if m.measure is None else _aggregate(m, values[m.name]) for m in metrics}


def _by_query(
    metrics: Sequence[Metric], lists: RankedLists, table: pa.Table, qrels: pa.Table | None
) -> dict[str, np.ndarray]:
    """Per-query values of ranking metrics: the core's from ``lists``, the others by ir-measures
    on the same queries."""
    outside = {m.measure: m.name for m in metrics if m.measure is not None}
    found = delegated.per_query(table, qrels, lists.qids, list(outside)) if outside else {}
    return {m.name: m.by_query(lists) if m.measure is None else found[m.measure] for m in metrics}


def _aggregate(metric: Metric, values: np.ndarray) -> float:
    """ir-measures' aggregate of a delegated measure (a mean, or a sum for counts such as NumRet)."""
    assert metric.measure is not None
    aggregator = metric.measure.aggregator()
    for value in values:
        aggregator.add(float(value))
    return float(aggregator.result())


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
