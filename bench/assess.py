"""The studies of a grid cell beyond its ranking metrics: the probes on each seed's predictions (cached
with their plots) and the paired significance of each method against the grid's baseline."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankuq.bench import metrics
from rankuq.bench.files import staged_folder
from rankuq.bench.probes import PROBES, ProbeResult, merge, scored_lists
from rankuq.bench.probes.significance import paired_t
from rankuq.errors import RankuqError

# Probe keys shown on the leaderboard (all of them go to MLflow): display name ← probe key.
HEADLINE = {"ERCE": "ERCE", "RA R@1": "RA.R_at_1", "nAUC AP u_max": "nAUC.AP.u_max"}
METRICS_FILE = "metrics.json"
# Part of every cached study's key: bump it when a probe's definition changes, so runs recompute.
# 2: ERCE with one estimator for every method, paper 000's balanced ECE beside ECE.all (fidelity).
PROBES_VERSION = 2


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
    """method → metric → p-value of a two-sided paired t-test per query (seed-averaged values)
    against ``baseline``, for the methods of one condition; the baseline has none."""
    base_qids, base = seed_averaged(tables[baseline], names)
    p_values = {}
    for method, method_tables in tables.items():
        if method == baseline:
            continue
        qids, values = seed_averaged(method_tables, names)
        if not np.array_equal(qids, base_qids):
            raise RankuqError(f"{method} and the baseline {baseline} scored different queries")
        p_values[method] = {name: paired_t(values[name], base[name]).p for name in names}
    return p_values
