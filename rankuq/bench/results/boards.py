"""Boards read back: from a run directory (leaderboard.csv and the plot index) or from an MLflow store."""

import csv as csv_module
import io
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import yaml
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from rankuq.bench.results.leaderboard import KEYS, PaperTables, board_columns, metrics_of, paper_tables
from rankuq.bench.results.mlflow_names import (
    BASELINE_TAG,
    LEVEL_TAG,
    METRICS_TAG,
    ROW_TAG,
    experiment_name,
    mlflow_name,
)
from rankuq.bench.rundir.layout import PLOT_INDEX, RunLayout
from rankuq.errors import RankuqError

if TYPE_CHECKING:  # MLflow takes over a second to import; a run directory's board needs none of it
    from mlflow.entities import Run as MlflowRun
    from mlflow.tracking import MlflowClient

SEARCH_LIMIT = 50_000  # the most MLflow runs one search returns; a grid has far fewer cells


@dataclass(frozen=True)
class Plot:
    condition: str
    method: str
    kind: str  # reliability, risk_aversion, abstention_AP, …
    path: Path


@dataclass(frozen=True, eq=False)
class Board:
    """A grid's leaderboard (the columns of leaderboard.csv: ``KEYS``, then ``M``, ``M std``,
    ``M p`` per metric M) and its plots."""

    name: str
    table: pd.DataFrame
    plots: tuple[Plot, ...]

    @cached_property
    def tables(self) -> PaperTables:
        """``paper_tables`` of the board, worked out once for every layout rendered from it."""
        return paper_tables(self.table)


def read_run_dir(run_dir: Path) -> Board:
    """The board of ``RUN_DIR/leaderboard.csv`` and the plots of ``RUN_DIR/plots/index.json``."""
    table = read_leaderboard(run_dir)
    index = RunLayout(run_dir).plot_index
    plots = _read_index(index)
    absent = [str(plot.path) for plot in plots if not plot.path.is_file()]
    if absent:
        raise RankuqError(f"{index} names missing plot files ({', '.join(absent)}): rerun `rankuq run`")
    return Board(_grid_name(run_dir), table, plots)


def _grid_name(run_dir: Path) -> str:
    """The name in the run directory's grid.yaml (what the run was), else the folder's name."""
    try:
        grid = yaml.safe_load(RunLayout(run_dir).grid_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        grid = None
    name = grid.get("name") if isinstance(grid, dict) else None
    return str(name) if name else run_dir.resolve().name


def read_leaderboard(run_dir: Path) -> pd.DataFrame:
    """``RUN_DIR/leaderboard.csv``, checked, without the plots (``rankuq findings`` reads the committed
    ``paper_runs/`` folders, which keep a grid's grid.yaml, seeds.csv and leaderboard.csv only)."""
    csv = RunLayout(run_dir).leaderboard_csv
    if not csv.is_file():
        raise RankuqError(f"{csv} not found: run `rankuq run [GRID.yaml] --run-dir {run_dir}` first")
    table = read_whole_csv(csv, "rerun `rankuq run` on its run directory to rewrite it")
    _check(table, str(csv))
    return table


def read_whole_csv(
    csv: Path, fix: str, kind: str = "leaderboard CSV", dtype: dict[str, type] | None = None
) -> pd.DataFrame:
    """A CSV file rankuq wrote, whole: a file cut mid-row or a row short of fields is refused, where
    pandas would pad the row with missing values (a std of 0, a row gone from the board); text that
    is not UTF-8 or not CSV is one error naming ``csv`` and ``fix``."""
    try:
        data = csv.read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RankuqError(f"{csv}: cannot read as UTF-8 text ({error}); {fix}") from None
    if not text.endswith("\n"):
        raise RankuqError(f"{csv}: cut off (no newline after the last row); {fix}")
    if not _same_widths(data):
        _check_widths(text, csv, fix, kind)
    try:
        # Only empty fields are missing values: a method or condition may well be called 'NA'.
        return pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""], dtype=dtype)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise RankuqError(f"{csv}: not a {kind} ({error}); {fix}") from None


def _same_widths(data: bytes) -> bool:
    """Whether every row has the header's number of fields, by pyarrow's CSV reader (threaded: the
    csv module took 0.7 s over a board of 200,000 rows); False where it is unsure, a blank line
    (which pyarrow reads as a row of nulls) or a file it refuses, for ``_check_widths`` to say."""
    from pyarrow import ArrowInvalid, BufferReader
    from pyarrow import csv as arrow_csv

    if data.startswith((b"\n", b"\r")) or b"\n\n" in data or b"\n\r\n" in data:
        return False
    options = arrow_csv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False)
    try:
        arrow_csv.read_csv(BufferReader(data), parse_options=options)
    except ArrowInvalid:
        return False
    return True


def _check_widths(text: str, csv: Path, fix: str, kind: str) -> None:
    """A row whose number of fields is not the header's, by its line: pandas would pad a short row
    with missing values (a std of 0, a row gone from the board)."""
    rows = csv_module.reader(io.StringIO(text))  # streamed: a list of every field took minutes at 200k rows
    try:
        width = len(next(rows, []))
        short = next(((i, len(row)) for i, row in enumerate(rows, 1) if len(row) != width), None)
    except csv_module.Error as error:  # a field over the csv module's size limit
        raise RankuqError(f"{csv}: not a {kind} ({error}); {fix}") from None
    if short is not None:
        raise RankuqError(
            f"{csv}, line {short[0] + 1}: {short[1]} fields where the header has {width}; {fix}"
        )


def _check(table: pd.DataFrame, source: str) -> None:
    """One error naming the source and what is wrong, before anything is formatted."""
    fix = "rewrite it with `rankuq run` (this rankuq reads the leaderboard.csv of its own runner)"
    metrics = metrics_of(table)
    missing = [c for c in (*KEYS, *(f"{m} p" for m in metrics)) if c not in table]
    if missing or not metrics:
        raise RankuqError(f"{source}: missing columns {missing or ['M', 'M std', 'M p']}; {fix}")
    if table.empty:
        raise RankuqError(f"{source}: no rows (did the grid finish?); {fix}")
    numbers = ["seeds", *board_columns(metrics)]
    wrong = [c for c in numbers if not is_numeric_dtype(table[c])]
    wrong += [] if is_bool_dtype(table["baseline"]) else ["baseline (True/False)"]
    if wrong:
        raise RankuqError(f"{source}: columns {wrong} hold values of the wrong type; {fix}")
    blank = table[["condition", "method", "seeds"]].isna().any(axis=1) | ~(table["seeds"] >= 1)
    if blank.any():
        raise RankuqError(
            f"{source}: row {int(np.argmax(blank))} lacks a condition, method or seed count; {fix}"
        )
    twice = table.condition[table.baseline][lambda c: c.duplicated()]
    if len(twice):
        raise RankuqError(f"{source}: condition {twice.iloc[0]!r} has two baseline rows; {fix}")


def _read_index(index: Path) -> tuple[Plot, ...]:
    """The plot index: a JSON list of {condition, method, kind, path (a file name beside it)}.

    An index may come from an MLflow server: each path must name a plain file in the index's own
    folder (no '..', no folder, no symlink), so a report never embeds a file from elsewhere."""
    if not index.is_file():
        raise RankuqError(f"{index} not found: rerun `rankuq run` to write the plots and their index")
    try:
        entries = json.loads(index.read_text())
        plots = tuple(
            Plot(str(e["condition"]), str(e["method"]), str(e["kind"]), _plot_path(index, e["path"]))
            for e in entries
        )
    except (ValueError, TypeError, KeyError, RecursionError) as error:
        reason = "nested too deep" if isinstance(error, RecursionError) else repr(error)
        raise RankuqError(
            f"{index}: not a JSON list of {{condition, method, kind, path}} objects ({reason}); "
            "rerun `rankuq run` to rewrite it"
        ) from None
    return plots


def _plot_path(index: Path, name: object) -> Path:
    folder = index.parent.resolve()
    path = folder / str(name)
    if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
        raise RankuqError(f"{index}: plot path {name!r} is not a file name in {folder}; rerun `rankuq run`")
    if path.is_symlink() or path.resolve().parent != folder:
        raise RankuqError(
            f"{index}: plot {name!r} is a link; a report embeds only the plots `rankuq run` wrote"
        )
    return path


def read_tracking(uri: str, grid: str | None, folder: Path, experiment: str | None = None) -> Board:
    """The newest grid's MLflow run at ``uri`` (or the one named ``grid``) as a board, its plot
    artifacts downloaded into ``folder``. What is read is described in ``bench.results.tracking``."""
    from mlflow.exceptions import MlflowException

    from rankuq.bench.results.mlflow_store import StoreClient  # a moved run dir's artifacts too

    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).is_file():
        # MLflow would create an empty store there; a typo deserves an error instead.
        raise RankuqError(f"{uri}: no such MLflow store; give the URI that `rankuq run` logged to")
    client = StoreClient(uri)
    name = experiment_name(experiment)
    if (found := client.get_experiment_by_name(name)) is None:
        raise RankuqError(
            f"no MLflow experiment '{name}' at {uri}: run `rankuq run` first or name --experiment"
        )
    parent = _parent_mlflow_run(client, found.experiment_id, uri, grid)
    parent_id = parent.info.run_id
    cells = current_cells(
        client.search_runs(
            [found.experiment_id],
            f"tags.`mlflow.parentRunId` = '{parent_id}' and tags.`{LEVEL_TAG}` = 'cell'",
            max_results=SEARCH_LIMIT,
        )
    )
    source = f"grid run {parent.info.run_name!r} ({parent_id}) at {uri}"
    try:
        table = _cell_table(parent.data.tags[METRICS_TAG], parent.data.tags[BASELINE_TAG], cells)
        ids = {(cell.data.tags["shift"], cell.data.tags["method"]): cell.info.run_id for cell in cells}
        plots = _read_index(Path(client.download_artifacts(parent_id, PLOT_INDEX, str(folder))))
        for plot in plots:
            client.download_artifacts(ids[plot.condition, plot.method], plot.path.name, str(folder))
    except (KeyError, ValueError, MlflowException) as error:
        raise RankuqError(
            f"{source}: {type(error).__name__}: {error}; it was not logged by this rankuq's "
            f"`rankuq run`: rerun the grid with --tracking-uri {uri}"
        ) from error
    _check(table, source)
    return Board(parent.info.run_name, table, plots)


def current_cells(cells: "list[MlflowRun]") -> "list[MlflowRun]":
    """The newest cell run of each (condition, method): a rerun after the data or a setting changed
    logs the cell again under the same grid run, and the older one no longer holds the board's numbers."""
    newest: dict[tuple[str, str], MlflowRun] = {}
    for cell in sorted(cells, key=lambda cell: cell.info.start_time or 0):
        newest[cell.data.tags.get("shift", ""), cell.data.tags.get("method", "")] = cell
    return list(newest.values())


def _parent_mlflow_run(client: "MlflowClient", experiment_id: str, uri: str, grid: str | None) -> "MlflowRun":
    """The newest grid's MLflow run (the parent of its cells'), or the newest named ``grid``."""
    # The name is matched here, not in the filter string: MLflow's filter syntax has no escape for
    # a quote, so a name like "it's" would break (or change) the query.
    is_grid = f"tags.`{LEVEL_TAG}` = 'grid'"
    grids = client.search_runs(
        [experiment_id], is_grid, order_by=["attributes.start_time DESC"], max_results=SEARCH_LIMIT
    )
    named = [parent for parent in grids if grid is None or parent.info.run_name == grid]
    if not named:
        names = sorted({parent.info.run_name for parent in grids})
        raise RankuqError(
            f"no grid run{f' named {grid!r}' if grid else ''} at {uri} (grids there: "
            f"{', '.join(names) or 'none'}); run `rankuq run --tracking-uri {uri}` first"
        )
    return named[0]


def _cell_table(metrics_tag: str, baseline: str, cells: "list[MlflowRun]") -> pd.DataFrame:
    """The board's rows from the cells' MLflow runs, in leaderboard.csv's order (``ROW_TAG``)."""
    columns = board_columns(json.loads(metrics_tag))
    rows = [
        {
            "condition": cell.data.tags["shift"],
            "method": cell.data.tags["method"],
            "seeds": int(cell.data.params["seeds"]),
            "baseline": cell.data.tags["method"] == baseline,
            **{column: cell.data.metrics.get(mlflow_name(column), np.nan) for column in columns},
        }
        for cell in sorted(cells, key=lambda cell: int(cell.data.tags[ROW_TAG]))
    ]
    table = pd.DataFrame(rows, columns=[*KEYS, *columns])
    # One seed's std is not logged (it would read as a spread of 0); the board writes 0 beside a value.
    for metric in json.loads(metrics_tag):
        one = (table.seeds == 1) & table[metric].notna()
        table.loc[one, f"{metric} std"] = table.loc[one, f"{metric} std"].fillna(0.0)
    return table
