"""The studies of a grid cell beyond its ranking metrics: the probes on each seed's predictions (cached
with their plots) and the paired significance of each method against the grid's baseline: a paired
t-test per query for ranking metrics (papers 000 and 001), a paired bootstrap over queries for the
calibration errors ECE, ECE.all and ERCE, which pool candidates and have no per-query value."""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from rankuq.bench import metrics
from rankuq.bench.files import staged_folder
from rankuq.bench.probes import PROBES, ProbeResult, merge, scored_lists
from rankuq.bench.probes.calibration import query_parts
from rankuq.bench.probes.significance import paired_t
from rankuq.errors import RankuqError

# Probe keys shown on the leaderboard (all of them go to MLflow): display name ← probe key.
HEADLINE = {
    "ECE.all": "ECE.all",
    "ERCE": "ERCE",
    "RA R@1": "RA.R@1",
    "RA AP": "RA.AP",
    "RA nDCG@10": "RA.nDCG@10",
    "nAUC AP u_max": "nAUC.AP.u_max",
}
CALIBRATION_ERRORS = ("ECE", "ECE.all", "ERCE")  # tested by the paired bootstrap over queries
RESAMPLES = 1000
BOOTSTRAP_SEED = 0
_RESAMPLE_CELLS = 1 << 22  # resample × query counts per block (32 MiB of int64)
METRICS_FILE = "metrics.json"
# Part of every cached study's key: bump it when a probe's definition changes, so runs recompute.
# 2: ERCE with one estimator for every method, Penha & Hauff, 2021's balanced ECE beside ECE.all (fidelity).
# 3: metric keys spell metrics as ir-measures does (RA.nDCG@10, not RA.nDCG_at_10).
PROBES_VERSION = 3
T = TypeVar("T")


@dataclass(frozen=True)
class Study:
    """A cell's probe metrics, notes and plot files (one seed)."""

    metrics: dict[str, float]
    notes: list[str]
    plots: list[Path]
    key: str  # of the probes' inputs: both predictions and a searched b
    searched: dict[str, Any]  # the searched values this seed used (train.lr, risk.b, …)


def run_probes(
    table: pa.Table,
    dev: pa.Table | None,
    names: Sequence[str],
    seed: int,
    options: Mapping[str, Mapping[str, Any]] = {},
) -> ProbeResult:
    """The named probes on one seed's predictions, each with its ``options`` (e.g. a searched
    ``{"risk": {"b": 0.5}}``); NOTA sees every query, the others only answerable ones. A probe the
    data cannot support (too few NOTA queries, say) becomes a note, not a crash, so one study does
    not stop a grid."""
    every = scored_lists(table)  # ranked once; the answerable queries are a selection of it
    lists = every.with_relevant()
    reference = None if dev is None else scored_lists(dev, "dev").with_relevant()
    results = []
    for name in names:
        probe = PROBES.get(name)
        try:
            data = every if name == "nota" else lists
            results.append(probe(data, dev=reference, seed=seed, **options.get(name, {})))
        except RankuqError as error:
            results.append(ProbeResult({}, notes=(f"{name} left out: {error}",)))
    return merge(results)


def cached_probes(
    folder: Path,
    table: pa.Table,
    dev: pa.Table | None,
    names: Sequence[str],
    seed: int,
    options: Mapping[str, Mapping[str, Any]] = {},
) -> tuple[dict[str, float], list[str], list[Path]]:
    """Probe metrics, notes and plot files of one seed, computed once into ``folder``.

    The folder is written under a temporary name and renamed, so a killed run leaves no
    half-written study behind.
    """
    if not (folder / METRICS_FILE).exists():
        result = run_probes(table, dev, names, seed, options)
        with staged_folder(folder) as staging:
            result.write_plots(staging)
            record = {"metrics": result.metrics, "notes": list(result.notes)}
            (staging / METRICS_FILE).write_text(json.dumps(record, indent=1, allow_nan=True))
    record = json.loads((folder / METRICS_FILE).read_text())
    return record["metrics"], record["notes"], sorted(folder.glob("*.png"))


def headline(probe_metrics: dict[str, float]) -> dict[str, float]:
    """The leaderboard's probe columns (NaN where the probe did not report the key)."""
    return {name: probe_metrics.get(key, np.nan) for name, key in HEADLINE.items()}


def seed_averaged(tables: Sequence[pa.Table], names: Sequence[str]) -> tuple[np.ndarray, dict]:
    """Per-query metric values averaged over seeds (every seed scores the same queries)."""
    per_seed = [metrics.per_query(t, names, drop_queries_without_relevant=True) for t in tables]
    qids = per_seed[0][0]
    if any(not np.array_equal(qids, other) for other, _ in per_seed[1:]):
        raise RankuqError("the seeds of a cell scored different queries; clear the run's predictions cache")
    return qids, {name: np.mean([values[name] for _, values in per_seed], axis=0) for name in names}


def significance(
    tables: dict[str, Sequence[pa.Table]], baseline: str, names: Sequence[str]
) -> dict[str, dict[str, float]]:
    """method → metric → p-value against ``baseline``, for the methods of one condition (the
    baseline has none), over the queries with a relevant candidate.

    Ranking metrics: a two-sided paired t-test on per-query values averaged over seeds. The
    calibration errors (``CALIBRATION_ERRORS``): ``bootstrap_p``, a paired bootstrap over
    queries. ECE of a method or baseline whose scores are not probabilities is NaN.
    """
    ranking = [name for name in names if name not in CALIBRATION_ERRORS]
    calibration = [name for name in names if name in CALIBRATION_ERRORS]
    p_values: dict[str, dict[str, float]] = {method: {} for method in tables if method != baseline}
    if ranking:
        base, others = _same_queries(tables, baseline, lambda seeds, _: seed_averaged(seeds, ranking))
        for method, values in others.items():
            p_values[method] |= {name: paired_t(values[name], base[name]).p for name in ranking}
    if calibration:
        base_parts, others = _same_queries(tables, baseline, _seed_parts)
        for method, parts in others.items():
            for name in calibration:
                tested = name in parts[0] and name in base_parts[0]
                p_values[method][name] = (
                    bootstrap_p([p[name] for p in parts], [p[name] for p in base_parts]) if tested else np.nan
                )
    return p_values


def _same_queries(
    tables: dict[str, Sequence[pa.Table]],
    baseline: str,
    per_query: Callable[[Sequence[pa.Table], str], tuple[np.ndarray, T]],
) -> tuple[T, dict[str, T]]:
    """``per_query``'s values (it returns qids, values) of the baseline, and of every other method,
    which must have scored the same queries as the baseline."""
    base_qids, base = per_query(tables[baseline], baseline)
    methods = {}
    for method in (m for m in tables if m != baseline):
        qids, methods[method] = per_query(tables[method], method)
        if not np.array_equal(qids, base_qids):
            raise RankuqError(f"{method} and the baseline {baseline} scored different queries")
    return base, methods


def _seed_parts(tables: Sequence[pa.Table], method: str) -> tuple[np.ndarray, list[dict]]:
    """Each seed's calibration errors split by query (``query_parts``), on the same queries."""
    lists = [scored_lists(table, method).with_relevant() for table in tables]
    if any(not np.array_equal(lists[0].qids, other.qids) for other in lists[1:]):
        raise RankuqError(
            f"the seeds of {method} scored different queries; clear the run's predictions cache"
        )
    return lists[0].qids, [query_parts(one) for one in lists]


def bootstrap_p(
    method: Sequence[tuple[np.ndarray, np.ndarray]],
    baseline: Sequence[tuple[np.ndarray, np.ndarray]],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> float:
    """Two-sided p-value of a paired bootstrap over queries for a calibration error.

    Each argument holds one (per-query bin gaps [Q, bins], per-query mass [Q]) per seed
    (``bench.metrics.ece.query_bin_gaps``). A resample draws Q queries with replacement
    (``numpy.random.default_rng(seed)``, the same queries for method and baseline: paired) and
    recomputes both errors on them (bins stay those of all the queries: ERCE's adaptive edges are
    not re-cut), each averaged over seeds; Δ* = method − baseline. The p-value
    is that of the percentile interval: 2·min(#{Δ* ≤ 0} + 1, #{Δ* ≥ 0} + 1) / (resamples + 1),
    capped at 1 (the +1 counts the observed sample, so p is never 0).
    """
    n_queries = method[0][1].size
    rng = np.random.default_rng(seed)
    step = max(1, _RESAMPLE_CELLS // n_queries)
    below = above = 0
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        counts = rng.multinomial(n_queries, np.full(n_queries, 1 / n_queries), size=size)
        delta = _resampled(counts, method) - _resampled(counts, baseline)
        below += int((delta <= 0).sum())
        above += int((delta >= 0).sum())
    return min(1.0, 2 * (min(below, above) + 1) / (resamples + 1))


def _resampled(counts: np.ndarray, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The error of each resample (rows of query counts), averaged over seeds."""
    return np.mean([np.abs(counts @ gaps).sum(axis=1) / (counts @ mass) for gaps, mass in parts], axis=0)
