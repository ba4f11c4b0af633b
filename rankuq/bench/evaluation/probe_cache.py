"""The probes of one predictions table, cached by content key beside it (``metrics.json`` and plots)."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq.atomic import staged_folder
from rankuq.bench.probes import PROBES, ProbeResult, scored_lists
from rankuq.bench.probes.base import merge
from rankuq.bench.statistics.parts import parts_table, per_query
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


METRICS_FILE = "metrics.json"
PARTS_FILE = "parts.parquet"  # the metrics split by query (bench.statistics.parts)
# Part of every cached study's key: bump it when a probe's definition changes, so runs recompute.
# 2: ERCE with one estimator for every method, Penha & Hauff, 2021's balanced ECE beside ECE.all (fidelity).
# 3: metric keys spell metrics as ir-measures does (RA.nDCG@10, not RA.nDCG_at_10).
# 4: per-query parts of the metrics beside them (parts.parquet), for resampling over queries.
PROBES_VERSION = 4
# The ranking metrics whose per-query values a study records beside the probes' (their mean is the
# leaderboard's value over the queries with a relevant candidate).
RANKING_PARTS = ("R@1", "R@5", "P@1", "AP", "RR", "nDCG@10")


@dataclass(frozen=True)
class Study:
    """A cell's probe metrics, notes and plot files (one seed)."""

    metrics: dict[str, float]
    notes: list[str]
    plots: list[Path]
    parts: Path  # the metrics split by query: a parts table (bench.statistics.parts)
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
    ``{"risk": {"b": 0.5}}``), with the ranking metrics' per-query parts (``RANKING_PARTS``); NOTA
    sees every query, the others only answerable ones. A probe the data cannot support (too few NOTA
    queries, say) becomes a note, not a crash, so one study does not stop a grid."""
    every = scored_lists(table)  # ranked once; the answerable queries are a selection of it
    lists = every.with_relevant()
    reference = None if dev is None else scored_lists(dev, "dev").with_relevant()
    ranking = lists.per_query(RANKING_PARTS)
    # R@1 of a query is at most 1/#relevant: the ceiling a claim's headroom is checked against.
    ranking["R@1.ceiling"] = 1.0 / lists.ranked.n_relevant
    results = [ProbeResult({}, parts={m: per_query(lists.qids, v) for m, v in ranking.items()})]
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
    subject: str = "",
) -> tuple[dict[str, float], list[str], list[Path], Path]:
    """Probe metrics, notes, plot files (titled by ``subject``: the cell) and the parts file of one
    seed, computed once into ``folder``.

    The folder is written under a temporary name and renamed, so a killed run leaves no
    half-written study behind.
    """
    if not (folder / METRICS_FILE).exists():
        result = run_probes(table, dev, names, seed, options)
        with staged_folder(folder) as staging:
            result.write_plots(staging, subject=subject)
            record = {"metrics": result.metrics, "notes": list(result.notes)}
            pq.write_table(parts_table(result.parts), staging / PARTS_FILE, compression="zstd")
            (staging / METRICS_FILE).write_text(json.dumps(record, indent=1, allow_nan=True))
    record = json.loads((folder / METRICS_FILE).read_text())
    return record["metrics"], record["notes"], sorted(folder.glob("*.png")), folder / PARTS_FILE


def headline(probe_metrics: dict[str, float]) -> dict[str, float]:
    """The leaderboard's probe columns (NaN where the probe did not report the key)."""
    return {name: probe_metrics.get(key, np.nan) for name, key in HEADLINE.items()}
