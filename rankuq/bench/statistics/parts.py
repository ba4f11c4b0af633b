"""Per-query parts: a probe metric split by query, so that it can be recomputed on resampled queries.

A metric over a set of queries is ``statistic(rows)`` of one row of parts per query; on every row of
the probed table it equals the probe's reported value (each probe's tests check that). The findings'
paired two-level bootstrap (``bench.statistics``) draws seeds, then queries, and recomputes a
claim's metric with its statistic, the same query rows for both sides of a comparison.

Statistics, registered by name (the name is stored beside the parts in ``queries.parquet``):

- ``mean``: rows [value]: the mean of a per-query value (R@1, AP, RA.R@1, CVaR.*).
- ``calibration_error``: rows [Σ w·(confidence − outcome) per bin …, Σ w]: Σ_b |Σ_q gap_qb| / Σ_q w_q,
  the ECE family with the bins fixed by all the rows (``bench.metrics.ece.query_bin_gaps``).
- ``ratio_of_means``: rows [numerator, denominator]: Σ numerator / Σ denominator (cutoff's F1 over
  the oracle's F1).
- ``fold_f1_macro`` (``bench.probes.nota``): rows [fold, truth, prediction] of out-of-fold
  predictions: the mean over folds of F1-macro (NOTA's 5-fold protocol).
- ``normalised_auc`` (``bench.probes.abstention_protocol``): rows [metric value, confidence]: nAUC of
  abstaining by the confidence.
- ``threshold_error`` (``bench.probes.abstention_studies``): rows [kept, metric value,
  reference performance]: |reference performance − mean metric of the kept test queries| (paper 002 §5.3).
- ``abstention_rate_error`` (``bench.probes.abstention_studies``): rows [kept, target rate]:
  |target − (1 − mean kept)|, the achieved abstention rate's error (paper 002 §5.3).

The first three depend on the rows only through their column sums: they are ``SumStatistic``s, which
the bootstrap runs vectorised over its replicates (one matrix product per block), as it runs a
``BatchStatistic`` (rows stacked on a leading axis); a plain function runs once per resample.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

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


def mean(column: int = 0) -> SumStatistic:
    """The mean of one column over the queries (a per-query metric: parts ``(n, 1)``)."""
    return SumStatistic(lambda sums, n: sums[..., column] / n, f"mean of column {column}")


def ratio_of_means(numerator: int = 0, denominator: int = 1) -> SumStatistic:
    """mean(column ``numerator``) / mean(column ``denominator``) = the ratio of their sums."""
    return SumStatistic(
        lambda sums, n: sums[..., numerator] / sums[..., denominator],
        f"ratio of columns {numerator} / {denominator}",
    )


def _calibration_error(sums: np.ndarray, n: int) -> np.ndarray:
    """Σ_b |Σ_q gap_qb| / Σ_q w_q from the column sums [Σ gap per bin …, Σ w]."""
    return np.asarray(np.abs(sums[..., :-1]).sum(axis=-1) / sums[..., -1])


STATISTICS: dict[str, Statistic] = {
    "mean": mean(0),
    "calibration_error": SumStatistic(_calibration_error, "calibration error"),
    "ratio_of_means": ratio_of_means(0, 1),
}


def statistic(function: Statistic) -> Statistic:
    """Register a statistic under its function's name (a ``SumStatistic``'s or ``BatchStatistic``'s:
    its ``name``)."""
    name = function.name if isinstance(function, SumStatistic | BatchStatistic) else function.__name__
    STATISTICS[name] = function
    return function


@dataclass(frozen=True)
class QueryParts:
    """One metric split by query: ``qids[i]``'s row ``rows[i]``, combined by the named statistic."""

    qids: np.ndarray
    rows: np.ndarray  # [queries, width] float64
    statistic: str

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise ValueError(f"unknown statistic {self.statistic!r}; valid: {', '.join(STATISTICS)}")
        if self.rows.ndim != 2 or len(self.rows) != len(self.qids):
            raise ValueError(f"parts: {self.rows.shape} rows for {len(self.qids)} queries")

    def value(self) -> float:
        """The metric over every query of the parts."""
        return STATISTICS[self.statistic](self.rows)


def per_query(qids: np.ndarray, values: np.ndarray, name: str = "mean") -> QueryParts:
    """Parts of a metric that is a mean over queries, or of any statistic with rows of one column."""
    return QueryParts(np.asarray(qids), np.asarray(values, dtype=np.float64).reshape(len(qids), -1), name)


PARTS_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("statistic", pa.string()),
        ("qid", pa.string()),
        ("parts", pa.list_(pa.float64())),
    ]
)


def parts_table(parts: Mapping[str, QueryParts]) -> pa.Table:
    """Every metric's parts as rows (metric, statistic, qid, parts), metrics in key order."""
    names = sorted(parts)
    counts = [len(parts[name].qids) for name in names]
    return pa.table(
        {
            "metric": np.repeat(np.array(names, dtype=object), counts),
            "statistic": np.repeat(np.array([parts[n].statistic for n in names], dtype=object), counts),
            "qid": np.concatenate([parts[n].qids.astype(str) for n in names] or [np.zeros(0, str)]),
            "parts": [row.tolist() for name in names for row in parts[name].rows],
        },
        schema=PARTS_SCHEMA,
    )


def read_parts(table: pa.Table) -> dict[str, QueryParts]:
    """``parts_table`` read back: metric → its parts, rows in the table's order."""
    frame = table.select(["metric", "statistic", "qid"]).to_pandas()
    values = table["parts"].combine_chunks()
    out = {}
    for metric, rows in frame.groupby("metric", sort=False).indices.items():
        width = len(values[int(rows[0])])
        flat = values.take(pa.array(rows)).flatten().to_numpy(zero_copy_only=False)
        out[str(metric)] = QueryParts(
            frame.qid.to_numpy()[rows], flat.reshape(len(rows), width), str(frame.statistic.iloc[rows[0]])
        )
    return out
