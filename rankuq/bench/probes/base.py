"""What every probe shares: the probe registry, the result type and the prepared score matrices.

A probe reads only a predictions table (contract 2). ``ScoredLists`` ranks it once, exactly as the
effectiveness metrics do (``bench.metrics.matrix``: prob_mean descending, ties by cid descending),
and holds [queries × candidates] matrices in that rank order, so every probe reuses
``bench.metrics`` for per-query values and no probe loops over queries in Python.
"""

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
import pyarrow as pa

from rankuq.bench import metrics
from rankuq.bench.metrics.matrix import RankedLists, pad_by_query, ranked_lists
from rankuq.bench.statistics.parts import QueryParts
from rankuq.errors import RankuqError
from rankuq.registry import Registry

V = TypeVar("V")
Draw = Callable[[Path, str], Path]  # (PNG path, subject of its title) → the path drawn


@dataclass(frozen=True)
class ProbeResult:
    """A probe's output.

    ``metrics``: flat, MLflow-ready keys (no '@': ``nDCG@10`` is written ``nDCG_at_10``).
    ``curves``: name → columns of equal length (x and y values of a figure).
    ``plots``: file stem → a function drawing that PNG at the path it is given, titled by the subject
    it is given (whose predictions: method × condition), drawn on demand.
    ``notes``: what was left out and why (a skipped study, an undefined value).
    ``parts``: metric key → the metric split by query (``bench.statistics.parts``), for the metrics a
    resampling over queries can recompute.
    """

    metrics: dict[str, float]
    curves: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    plots: dict[str, Draw] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    parts: dict[str, QueryParts] = field(default_factory=dict)

    def write_plots(self, folder: Path, prefix: str = "", subject: str = "") -> list[Path]:
        """Draw every plot as ``folder/<prefix><stem>.png``, titled by ``subject`` (e.g. the cell's
        label), each written under a temporary name first, so no half-written PNG is left behind."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for stem, draw in self.plots.items():
            path = folder / f"{prefix}{stem}.png"
            os.replace(draw(path.with_name(f".{path.stem}.tmp.png"), subject), path)
            paths.append(path)
        return paths


def merge(results: Sequence[ProbeResult]) -> ProbeResult:
    """One result holding every key of ``results``; a key produced twice is a bug, so it raises."""
    merged = ProbeResult({})
    for result in results:
        _add_new(merged.metrics, result.metrics)
        _add_new(merged.curves, result.curves)
        _add_new(merged.parts, result.parts)
        merged.plots.update(result.plots)
        merged = replace(merged, notes=merged.notes + result.notes)
    return merged


def _add_new(mine: dict[str, V], theirs: dict[str, V]) -> None:
    clash = mine.keys() & theirs.keys()
    if clash:
        raise ValueError(f"probe keys produced twice: {sorted(clash)}")
    mine.update(theirs)


def key(metric: str) -> str:
    """A metric name in a file or plot name (``R@1`` → ``R_at_1``). Metric keys keep the metric's
    own spelling (``nAUC.nDCG@10.u_max``); MLflow's ('@' refused) is made in ``bench.results.tracking``."""
    return metric.replace("@", "_at_")


@dataclass(frozen=True)
class ScoredLists:
    """A predictions table's queries (sorted by qid) as [Q, L] matrices in rank order, 0-padded
    beyond each query's ``length``.

    ``scores`` is prob_mean (float64, what the ranking used); ``samples`` the S draws per
    candidate ([Q, L, S] float32), or None when the table has one draw (S = 1: a deterministic
    ranker, whose only draw is prob_mean). ``ranked`` is the ``bench.metrics`` view of the same
    queries, with ``ranked.labels`` aligned column for column.
    """

    ranked: RankedLists
    scores: np.ndarray
    samples: np.ndarray | None
    length: np.ndarray
    _values: dict[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def qids(self) -> np.ndarray:
        return self.ranked.qids

    @property
    def n_samples(self) -> int:
        return 1 if self.samples is None else self.samples.shape[2]

    @property
    def mask(self) -> np.ndarray:
        """[Q, L]: True where a candidate is (rank r < the query's length)."""
        return np.arange(self.scores.shape[1]) < self.length[:, None]

    @property
    def relevant(self) -> np.ndarray:
        """[Q, L]: label > 0 (graded labels count as relevant from grade 1), False on padding."""
        return self.ranked.labels > 0

    def variance(self) -> np.ndarray:
        """[Q, L] variance of the draws (population, ddof = 0); 0 for a deterministic ranker."""
        if self.samples is None:
            return np.zeros_like(self.scores)
        return np.asarray(self.samples.var(axis=2, dtype=np.float64))

    def select(self, keep: np.ndarray) -> "ScoredLists":
        """The queries where the boolean ``keep`` is true, or those at the given indices."""
        if keep.dtype != bool:
            keep = np.isin(np.arange(self.length.size), keep)
        return ScoredLists(
            ranked=self.ranked.select(keep),
            scores=self.scores[keep],
            samples=None if self.samples is None else self.samples[keep],
            length=self.length[keep],
        )

    def with_relevant(self) -> "ScoredLists":
        """The queries with at least one relevant candidate (the leaderboard's query set: ranking
        metrics, ERCE and abstention are degenerate without one)."""
        keep = self.ranked.n_relevant > 0
        if not keep.any():
            raise RankuqError(
                f"{self.ranked.source}: no query has a relevant candidate (label > 0), so there is "
                "nothing to rank; check the labels"
            )
        return self if keep.all() else self.select(keep)

    def per_query(self, names: Sequence[str], order: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per-query values of ranking metrics (``bench.metrics`` names), for the rank order
        (computed once per table, whichever probe asks first) or for ``order`` ([Q, L]: column
        indices of the rank-order matrices, best first)."""
        if order is not None:
            lists = replace(self.ranked, labels=np.take_along_axis(self.ranked.labels, order, axis=1))
            return {name: metrics.get(name).by_query(lists) for name in names}
        for name in names:
            if name not in self._values:
                self._values[name] = metrics.get(name).by_query(self.ranked)
        return {name: self._values[name] for name in names}


def scored_lists(table: pa.Table, source: str = "predictions") -> ScoredLists:
    """Rank a contract-2 table once (``bench.metrics.matrix.ranked_lists``) and pad its scores
    and draws; non-finite draws and rows with different numbers of draws are refused."""
    ranked = ranked_lists(table, source=source)
    n_queries = ranked.qids.size
    return ScoredLists(
        ranked=ranked,
        scores=pad_by_query(ranked.row_query, ranked.scores, n_queries),
        samples=_samples(table, ranked, source),
        length=np.bincount(ranked.row_query, minlength=n_queries),
    )


def _samples(table: pa.Table, ranked: RankedLists, source: str) -> np.ndarray | None:
    if "samples" not in table.column_names:
        return None
    column = table["samples"].combine_chunks()
    counts = column.value_lengths().fill_null(0).to_numpy()
    bad = np.flatnonzero((counts != counts[0]) | (counts == 0))
    if bad.size:
        row = int(bad[0])
        raise RankuqError(
            f"{source}: row {row} (qid {table['qid'][row]}): {counts[row]} samples (row 0 has "
            f"{counts[0]}); every row needs the same number S >= 1 of draws"
        )
    if counts[0] == 1:
        return None
    draws = column.flatten().to_numpy().astype(np.float32, copy=False).reshape(len(column), -1)
    bad = np.flatnonzero(~np.isfinite(draws).all(axis=1))
    if bad.size:
        row = int(bad[0])
        raise RankuqError(
            f"{source}: row {row} (qid {table['qid'][row]}, cid {table['cid'][row]}): a sample is "
            f"not finite ({draws[row].tolist()[:5]}…); {bad.size} rows in all, fix the scorer"
        )
    return pad_by_query(ranked.row_query, draws[ranked.rows], ranked.qids.size)


def as_lists(predictions: pa.Table | ScoredLists, source: str = "predictions") -> ScoredLists:
    """A table prepared once, or one already prepared (``bench.probes.probe`` shares it)."""
    return predictions if isinstance(predictions, ScoredLists) else scored_lists(predictions, source)


def top_k(matrix: np.ndarray, length: np.ndarray, k: int) -> np.ndarray:
    """The first k rank-order columns of a [Q, L, …] matrix; a list shorter than k repeats its
    last (lowest-ranked) candidate, so every query has k feature columns."""
    columns = np.minimum(np.arange(k), length[:, None] - 1)
    return np.asarray(matrix[np.arange(length.size)[:, None], columns])


def split_queries(n_queries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Paper 002's 80/20 reference/test split of query indices (each sorted): the first ⌊N/5⌋
    of ``numpy.random.default_rng(seed).permutation(N)`` are the test queries."""
    test = np.zeros(n_queries, dtype=bool)
    test[np.random.default_rng(seed).permutation(n_queries)[: n_queries // 5]] = True
    return np.flatnonzero(~test), np.flatnonzero(test)


class Probe(Protocol):
    """A probe module's ``probe``: a predictions table (or one prepared), a dev table where it fits
    or selects something, a seed for what it draws, and its own keyword options (risk's ``b``), each
    with a default: callers pass them as ``**options``, which a protocol cannot list."""

    def __call__(
        self,
        predictions: pa.Table | ScoredLists,
        *,
        dev: pa.Table | ScoredLists | None = None,
        seed: int = 0,
    ) -> ProbeResult: ...


P = TypeVar("P", bound=Probe)


class ProbeRegistry(Registry[Probe]):
    """``Registry`` whose decorator gives back a probe module's ``probe`` with its own options' types."""

    def register(self, item: P) -> P:
        super().register(item)
        return item


PROBES = ProbeRegistry("probe", plugins="rankuq.probes")
