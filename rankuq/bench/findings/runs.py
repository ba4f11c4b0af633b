"""Run directories read for the findings: grid.yaml, seeds.csv, leaderboard.csv, queries.parquet (the
metrics split by query), and method_cost's CSV."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from rankuq.bench.config.grid import GridSpec, Side, load_grid
from rankuq.bench.findings.claims import COST_COLUMNS, Check, Kind
from rankuq.bench.findings.conditions import Conditions, of_spec
from rankuq.bench.findings.grid_files import GridFile, against_grid_file
from rankuq.bench.results.boards import read_leaderboard, read_whole_csv
from rankuq.bench.results.provenance import PREDICTIONS_KEY, PROBES, Provenance, check
from rankuq.bench.rundir.layout import RunLayout
from rankuq.bench.statistics.parts import QueryParts, read_parts
from rankuq.errors import RankuqError


@dataclass(frozen=True)
class FinishedRun:
    """What findings reads of one finished run directory."""

    folder: Path
    spec: GridSpec
    seeds: pd.DataFrame  # seeds.csv
    board: pd.DataFrame  # leaderboard.csv
    kinds: dict[str, tuple[Kind, str]]  # condition → (kind, variant of its tested lists)
    provenance: Provenance | None = None  # whether its cells are this checkout's (None: not checked)
    queries: "PerQuery | None" = None  # queries.parquet (None: the run predates per-query records)
    tested: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # condition → (test task, ns)
    trained: dict[str, Side] = field(default_factory=dict)  # condition → its training side
    # (precondition, condition, ranker) → its check: a bootstrap that many claims of a condition share
    checked: dict[tuple[str, str, str], Check] = field(default_factory=dict, compare=False, repr=False)
    grid_file: GridFile | None = None  # its grid against rankuq/bench/grids/NAME.yaml (None: not compared)

    @property
    def conditions(self) -> Conditions:
        return Conditions(self.kinds, self.tested, self.trained)

    def parts(self, condition: str, method: str, metric: str) -> dict[int, QueryParts]:
        """Seed → the metric's parts for a cell (empty where the run recorded none)."""
        return {} if self.queries is None else self.queries.parts(condition, method, metric)


class PerQuery(Protocol):
    """Per-query parts looked up by (condition, method, metric): queries.parquet, or a test's table."""

    def parts(self, condition: str, method: str, metric: str) -> dict[int, QueryParts]: ...

    def queries(self) -> dict[str, int]:
        """Condition → the number of test queries it records."""
        ...


class QueryRecords:
    """queries.parquet of a run, read once, looked up by (condition, method, metric)."""

    def __init__(self, path: Path) -> None:
        table = pq.read_table(path)
        self._queries = (
            table.select(["condition", "qid"]).to_pandas().groupby("condition", sort=False).qid.nunique()
        )
        keys = table.select(["condition", "method", "metric", "seed"]).to_pandas()
        self._table = table.select(["metric", "statistic", "qid", "parts"])
        # (condition, method, metric) → seed → its rows: indexed once, not scanned per lookup
        self._rows: dict[tuple[str, str, str], dict[int, np.ndarray]] = {}
        for (c, m, name, seed), rows in keys.groupby(
            ["condition", "method", "metric", "seed"], sort=False
        ).indices.items():
            self._rows.setdefault((c, m, name), {})[int(seed)] = rows
        self._cache: dict[tuple[str, str, str], dict[int, QueryParts]] = {}

    def queries(self) -> dict[str, int]:
        return {str(condition): int(n) for condition, n in self._queries.items()}

    def parts(self, condition: str, method: str, metric: str) -> dict[int, QueryParts]:
        key = (condition, method, metric)
        if key not in self._cache:
            seeds = self._rows.get(key, {})
            self._cache[key] = {
                seed: read_parts(self._table.take(np.asarray(rows)))[metric] for seed, rows in seeds.items()
            }
        return self._cache[key]


def read_finished_run(folder: Path) -> FinishedRun:
    layout = RunLayout(folder)
    fix = f"rerun `rankuq run {folder}/grid.yaml --run-dir {folder}` (cached: it trains nothing)"
    if not layout.grid_file.is_file():
        raise RankuqError(f"{layout.grid_file} not found: not a finished run directory; {fix}")
    spec, params = load_grid(layout.grid_file)
    board = read_leaderboard(folder)
    if not layout.seeds_csv.is_file():
        raise RankuqError(f"{layout.seeds_csv} not found (written by rankuq run); {fix}")
    # A key is hex: read as text, or one like "12e4…" turns into a number.
    seeds = read_whole_csv(layout.seeds_csv, fix, "seeds CSV", dtype={PREDICTIONS_KEY: str})
    missing = [c for c in ("condition", "method", "seed") if c not in seeds]
    if missing:
        raise RankuqError(f"{layout.seeds_csv}: missing columns {missing}; {fix}")
    _check_numbers(seeds, layout.seeds_csv, fix, whole=["seed", PROBES])
    found = of_spec(spec)
    queries = QueryRecords(layout.queries_file) if layout.queries_file.is_file() else None
    provenance = check(folder, spec, params, seeds)
    return FinishedRun(
        folder,
        spec,
        seeds,
        board,
        found.kinds,
        provenance,
        queries,
        found.tested,
        found.trained,
        grid_file=against_grid_file(spec),
    )


def read_cost(path: Path) -> pd.DataFrame:
    """method_cost's CSV (``--out``): every timed repeat of every method."""
    fix = f"write it with `python -m rankuq.bench.benchmarks.method_cost --out {path}`"
    if not path.is_file():
        raise RankuqError(f"{path} not found; {fix}")
    table = read_whole_csv(path, fix, "method_cost CSV")
    missing = [column for column in COST_COLUMNS if column not in table]
    if missing:
        raise RankuqError(f"{path}: missing columns {missing}; {fix}")
    _check_numbers(table, path, fix, whole=["layers", "pairs", "threads", "repeat"], positive=["seconds"])
    return table


def read_costs(paths: Sequence[Path]) -> pd.DataFrame | None:
    """Every given method_cost CSV in one table (None: no file given), each row with its ``file``:
    one file's repeats are never paired with another's."""
    if not paths:
        return None
    return pd.concat([read_cost(path).assign(file=str(path)) for path in paths], ignore_index=True)


def _check_numbers(
    table: pd.DataFrame, path: Path, fix: str, whole: Sequence[str], positive: Sequence[str] = ()
) -> None:
    """Columns of whole numbers (a seed, a count) and of positive numbers (seconds) hold nothing else,
    blanks included: one error naming the first bad value's line, not a ValueError later."""
    for column in [c for c in [*whole, *positive] if c in table]:
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(values) | ((values % 1 != 0) if column in whole else ~(values > 0))
        if bad.any():
            row = int(np.argmax(bad))
            kind = "a whole number" if column in whole else "a positive number"
            # +2: the header is line 1, and rankuq's CSVs hold one row a line
            raise RankuqError(
                f"{path}, line {row + 2}: {column} is {table[column].tolist()[row]!r}, expected {kind}; {fix}"
            )
