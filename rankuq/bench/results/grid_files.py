"""The files a grid run writes from its numbers, beside the MLflow store: seeds.csv, queries.parquet,
leaderboard.csv, the plots' index.json, leaderboard.md and report.html (where each lies:
``bench.rundir.layout``)."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq.atomic import atomic_write, staged_file
from rankuq.bench.evaluation.probe_cache import Study
from rankuq.bench.planning.plan import Cell, Plan
from rankuq.bench.results.boards import read_run_dir
from rankuq.bench.results.leaderboard import write_csv
from rankuq.bench.results.provenance import recorded_keys
from rankuq.bench.results.report import write_report


def write_grid_files(
    plan: Plan, results: pd.DataFrame, board: pd.DataFrame, studies: dict[Cell, Study]
) -> tuple[Path, ...]:
    """Every file of the run's numbers; returns leaderboard.md, report.html, leaderboard.csv and
    plots/index.json (what MLflow logs)."""
    layout = plan.layout
    _write_seeds(plan, results, studies)
    _write_queries(plan, studies)
    csv, index = write_csv(board, layout.leaderboard_csv), _write_plot_index(plan, studies)
    # leaderboard.md (Penha & Hauff, 2021's layout) and report.html, read back as `rankuq leaderboard` does
    return (*write_report(read_run_dir(layout.root), layout.root), csv, index)


def _write_seeds(plan: Plan, results: pd.DataFrame, studies: dict[Cell, Study]) -> None:
    """seeds.csv: the leaderboard's per-seed values beside every probe metric (sorted columns), and
    each cell's keys (bench.results.provenance)."""
    probes = pd.DataFrame([studies[cell].metrics for cell in plan.cells], index=results.index)
    extra = sorted(set(probes.columns) - set(results.columns))
    table = pd.concat([results, probes[extra]], axis=1)
    for position, (column, values) in enumerate(recorded_keys(plan).items(), start=3):
        table.insert(position, column, values)  # after condition, method, seed: what findings checks
    atomic_write(plan.layout.seeds_csv, table.to_csv(index=False))


def _write_queries(plan: Plan, studies: dict[Cell, Study]) -> None:
    """queries.parquet: every cell's per-query parts (``bench.statistics.parts``) under its condition,
    method and seed, in the order of seeds.csv."""
    tables = []
    for cell in plan.cells:
        parts = pq.read_table(studies[cell].parts)
        keys = {"condition": cell.condition, "method": cell.method, "seed": cell.seed}
        for position, (name, value) in enumerate(keys.items()):
            column = pa.array([value] * parts.num_rows, pa.int64() if name == "seed" else pa.string())
            parts = parts.add_column(position, name, column)
        tables.append(parts)
    with staged_file(plan.layout.queries_file) as staging:
        pq.write_table(pa.concat_tables(tables), staging, compression="zstd")


def _write_plot_index(plan: Plan, studies: dict[Cell, Study]) -> Path:
    """plots/ holds each (condition, method)'s plots of its first seed, listed in index.json."""
    layout = plan.layout
    layout.plots.mkdir(exist_ok=True)
    index, seen = [], set()
    for cell, study in studies.items():
        if (cell.condition, cell.method) in seen:
            continue
        seen.add((cell.condition, cell.method))
        for plot in study.plots:
            target = layout.plot(plot.stem, cell.condition, cell.method)
            shutil.copyfile(plot, target)
            index.append(
                {"condition": cell.condition, "method": cell.method, "kind": plot.stem, "path": target.name}
            )
    atomic_write(layout.plot_index, json.dumps(index, indent=1, ensure_ascii=False))
    return layout.plot_index
