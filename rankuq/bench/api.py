"""The Python API for notebooks: the commands as functions returning pandas objects.

import rankuq
board = rankuq.run_grid({"tasks": ["wikiqa"], "methods": {"bm25": {}, "bert": {}}}, "runs/mine")
rankuq.evaluate(predictions="runs/mine/predictions/wikiqa/bert/seed-0-….parquet", probes=["calibration"])
rankuq.evaluate_queries(predictions=frame)         # a DataFrame (qid, cid, label, prob_mean, samples)
rankuq.leaderboard("runs/mine")                      # or tracking_uri="http://…", grid="mine"
rankuq.compare(["bm25.run", "mine.run"], qrels="test.qrels", metrics=["AP", "RR@10"])

The keywords ``run``, ``dev_run`` and ``runs`` are TREC run files (``trec_run`` inside rankuq): they
keep the spelling of the commands' ``--run``, ``--dev-run`` and ``runs``, which callers already use.
"""

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeAlias

import pandas as pd
import pyarrow as pa

from rankuq.bench.evaluation.blackbox import (
    evaluate_file,
    per_query_values,
    read_inputs,
)
from rankuq.bench.results.boards import read_run_dir, read_tracking
from rankuq.bench.results.comparison import compare as _compare
from rankuq.bench.run.grid_run import GridRequest, grid_run


def run_grid(
    grid: Mapping[str, object] | str | Path | None = None,
    run_dir: str | Path | None = None,
    *,
    data_dir: str | None = None,
    tracking_uri: str | None = None,
    address: str | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) a grid, given as a dict, a YAML path, or None for the built-in grid; returns
    the leaderboard (one row per condition and method; as `rankuq run` writes leaderboard.csv). As
    the command does: the inputs checked first, the run directory (default runs/<grid name>) held
    for this run alone (a second run on it is refused at once), leftover Ray processes stopped."""
    source = grid if isinstance(grid, Mapping) else _path(grid)
    request = GridRequest(
        source,
        _path(run_dir),
        data_dir=data_dir,
        tracking_uri=tracking_uri,
        address=address,
        experiment=experiment,
        holder="rankuq.run_grid, the Python API",  # sys.argv is the notebook kernel's or a script's
    )
    return grid_run(request).board


# A Parquet file, or a contract-2 table in memory
Predictions: TypeAlias = str | Path | pd.DataFrame | pa.Table


def evaluate(
    *,
    predictions: Predictions | None = None,
    run: str | Path | None = None,
    qrels: str | Path | None = None,
    probes: Sequence[str] = (),
    dev: Predictions | None = None,
    dev_run: str | Path | None = None,
    dev_qrels: str | Path | None = None,
    seed: int = 0,
    metrics: Sequence[str] | None = None,
    probabilities: bool | None = None,
    confidences: Sequence[str] | None = None,
    strict: bool = False,
) -> pd.Series:
    """Metrics of predictions (a Parquet file or a DataFrame with qid, cid, label, prob_mean and
    samples), or of a TREC run with its qrels, plus the named probes, as `rankuq evaluate` (its
    --dev / --dev-run / --dev-qrels, --metrics, --probabilities, --confidences and --strict as
    keywords); a Series keyed as `rankuq evaluate --json` keys them."""
    values = evaluate_file(
        predictions=_table(predictions),
        trec_run=_path(run),
        qrels=_path(qrels),
        probes=probes,
        dev=_table(dev),
        dev_trec_run=_path(dev_run),
        dev_qrels=_path(dev_qrels),
        seed=seed,
        names=metrics,
        probabilities=probabilities,
        confidences=confidences,
        strict=strict,
    )
    return pd.Series(values, dtype=float)


def evaluate_queries(
    *,
    predictions: Predictions | None = None,
    run: str | Path | None = None,
    qrels: str | Path | None = None,
    metrics: Sequence[str] | None = None,
    probabilities: bool | None = None,
    strict: bool = False,
) -> pd.DataFrame:
    """Each query's value of every per-query metric, as `rankuq evaluate --by-query`: a row per
    qid (queries of the qrels that the TREC run missed score 0), a column per metric."""
    evaluated = read_inputs(
        trec_run=_path(run),
        qrels=_path(qrels),
        predictions=_table(predictions),
        strict=strict,
        probabilities=probabilities,
    )
    values = per_query_values(evaluated, metrics)
    return pd.DataFrame.from_dict(values, orient="index").rename_axis("qid")


def _table(value: Predictions | None) -> Path | pa.Table | None:
    """A DataFrame as an Arrow table (its index dropped), a path as a Path."""
    if isinstance(value, pd.DataFrame):
        return pa.Table.from_pandas(value, preserve_index=False)
    return value if value is None or isinstance(value, pa.Table) else Path(value)


def _path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def leaderboard(
    run_dir: str | Path | None = None,
    *,
    tracking_uri: str | None = None,
    grid: str | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """A finished grid's leaderboard, from its run directory or from an MLflow store."""
    if (run_dir is None) == (tracking_uri is None):
        raise ValueError("give a run directory or a tracking_uri, not both or neither")
    if run_dir is not None:
        return read_run_dir(Path(run_dir)).table
    assert tracking_uri is not None  # exactly one of the two was given
    with tempfile.TemporaryDirectory() as folder:
        return read_tracking(tracking_uri, grid, Path(folder), experiment).table


def compare(
    runs: Sequence[str | Path],
    *,
    qrels: str | Path,
    baseline: str | Path | None = None,
    metrics: Sequence[str] | None = None,
    correction: str = "bh",
    test: str = "t",
    strict: bool = False,
) -> pd.DataFrame:
    """TREC runs against a baseline TREC run (the first unless given), as ``rankuq compare``: a row
    per TREC run with each metric's mean, the p-values of ``test`` alone (``t``: the paired t-test, or
    ``randomisation``), raw and corrected (``correction``: ``bh`` or ``holm``), and the mark (†, ‡)."""
    return _compare(
        [Path(trec_run) for trec_run in runs], Path(qrels), _path(baseline), metrics, correction, test, strict
    ).table
