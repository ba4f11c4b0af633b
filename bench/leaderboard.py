"""The leaderboard: one row per (condition, method), mean ± std over seeds and the paired-test p-value
against the baseline method, as Markdown and CSV; read back from a run directory or MLflow and laid
out as Penha & Hauff, 2021's Tables 2–3 (per condition, relative change against the baseline with significance
marks, Benjamini–Hochberg adjusted per condition); a LaTeX export for papers."""

import csv as csv_module
import html
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from mlflow.entities import Run
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from pandas.api.types import is_bool_dtype, is_numeric_dtype
from rich import box
from rich.table import Table
from rich.text import Text
from scipy.stats import false_discovery_control

from rankuq.bench.files import atomic_write
from rankuq.bench.layout import PLOT_INDEX, RunLayout
from rankuq.bench.tracking import (
    BASELINE_TAG,
    LEVEL_TAG,
    METRICS_TAG,
    ROW_TAG,
    experiment_name,
    mlflow_name,
)
from rankuq.errors import RankuqError

RANKING_METRICS = ("R@1", "R@5", "P@1", "AP", "RR", "nDCG@10")
LEADERBOARD_METRICS = (
    *RANKING_METRICS,
    "ECE",
    "ECE.all",
    "ERCE",
    "RA R@1",
    "RA AP",
    "RA nDCG@10",
    "nAUC AP u_max",
)
KEYS = ("condition", "method", "seeds", "baseline")
LOWER_IS_BETTER = ("ECE", "ERCE")  # name prefixes: calibration errors
ALPHA = 0.05  # on the Benjamini–Hochberg adjusted p-values (``adjusted_p_values``)
BETTER, WORSE = "†", "‡"
MISSING = "—"
SEARCH_LIMIT = 50_000  # the most runs one MLflow search returns; a grid has far fewer cells


def leaderboard(
    results: pd.DataFrame,
    p_values: dict[tuple[str, str], dict[str, float]] | None = None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """``results`` has one row per (condition, method, seed) and a column per metric (NaN = not defined);
    ``p_values`` maps (condition, method) to each metric's p-value against ``baseline``.

    Returns one row per (condition, method) with ``<metric>`` = mean, ``<metric> std`` over seeds
    (sample standard deviation; 0 for a single seed) and ``<metric> p`` (NaN: no test).
    """
    metrics = [m for m in LEADERBOARD_METRICS if m in results.columns]
    grouped = results.groupby(["condition", "method"], sort=False)[metrics]
    means = grouped.mean()
    stds = grouped.std(ddof=1).fillna(0.0).where(means.notna())
    tests = pd.DataFrame.from_dict(p_values or {}, orient="index").reindex(index=means.index, columns=metrics)
    table = means.join(stds.add_suffix(" std")).join(tests.add_suffix(" p"))
    table.insert(0, "seeds", grouped.size())
    table.insert(1, "baseline", table.index.get_level_values("method") == baseline)
    return table[["seeds", "baseline", *board_columns(metrics)]].reset_index()


def metrics_of(board: pd.DataFrame) -> list[str]:
    """The metric columns, in board order: those with a ``<metric> std`` column beside them."""
    return [column for column in board.columns if f"{column} std" in board.columns]


def board_columns(metrics: Iterable[str]) -> list[str]:
    """The number columns of a board's metrics: mean, sample std over seeds, paired-test p-value."""
    return [f"{m}{suffix}" for m in metrics for suffix in ("", " std", " p")]


def lower_is_better(metric: str) -> bool:
    return metric.startswith(LOWER_IS_BETTER)


def _mean_std(mean: float, std: float) -> str:
    return MISSING if np.isnan(mean) else f"{mean:.3f} ± {std:.3f}"


def write_csv(board: pd.DataFrame, path: Path) -> Path:
    """Write the raw numbers as ``path`` (a run's leaderboard.csv), atomically (the Markdown and HTML
    layouts are ``bench.report.write_report``'s)."""
    atomic_write(path, board.to_csv(index=False))
    return path


# --- reading a board back ---------------------------------------------------------------------


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


def read_run_dir(run_dir: Path) -> Board:
    """The board of ``RUN_DIR/leaderboard.csv`` and the plots of ``RUN_DIR/plots/index.json``."""
    table = read_leaderboard(run_dir)
    index = RunLayout(run_dir).plot_index
    plots = _read_index(index)
    absent = [str(plot.path) for plot in plots if not plot.path.is_file()]
    if absent:
        raise RankuqError(f"{index} names missing plot files ({', '.join(absent)}): rerun `rankuq run`")
    return Board(run_dir.resolve().name, table, plots)


def read_leaderboard(run_dir: Path) -> pd.DataFrame:
    """``RUN_DIR/leaderboard.csv``, checked, without the plots (``rankuq findings`` reads the committed
    ``results/`` folders, which keep a grid's grid.yaml, seeds.csv and leaderboard.csv only)."""
    csv = RunLayout(run_dir).leaderboard_csv
    if not csv.is_file():
        raise RankuqError(f"{csv} not found: run `rankuq run [GRID.yaml] --run-dir {run_dir}` first")
    table = _read_csv(csv)
    _check(table, str(csv))
    return table


def _read_csv(csv: Path) -> pd.DataFrame:
    """leaderboard.csv, whole: a file cut mid-row or a row short of fields is refused, where pandas
    would pad the row with missing values (a std of 0, a row gone from the board)."""
    fix = "rerun `rankuq run` on its run directory to rewrite it"
    try:
        text = csv.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RankuqError(f"{csv}: cannot read as UTF-8 text ({error}); {fix}") from None
    if not text.endswith("\n"):
        raise RankuqError(f"{csv}: cut off (no newline after the last row); {fix}")
    rows = list(csv_module.reader(io.StringIO(text)))
    short = next((i for i, row in enumerate(rows) if len(row) != len(rows[0])), None)
    if short is not None:
        raise RankuqError(
            f"{csv}, line {short + 1}: {len(rows[short])} fields where the header has {len(rows[0])}; {fix}"
        )
    try:
        # Only empty fields are missing values: a method or condition may well be called 'NA'.
        return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise RankuqError(f"{csv}: not a leaderboard CSV ({error}); {fix}") from None


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
    """The newest grid run in MLflow at ``uri`` (or the one named ``grid``) as a board, its plot
    artifacts downloaded into ``folder``. What is read is described in ``bench.tracking``."""
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).is_file():
        # MLflow would create an empty store there; a typo deserves an error instead.
        raise RankuqError(f"{uri}: no such MLflow store; give the URI that `rankuq run` logged to")
    client = MlflowClient(uri)
    name = experiment_name(experiment)
    if (found := client.get_experiment_by_name(name)) is None:
        raise RankuqError(
            f"no MLflow experiment '{name}' at {uri}: run `rankuq run` first or name --experiment"
        )
    parent = _grid_run(client, found.experiment_id, uri, grid)
    grid_id = parent.info.run_id
    cells = client.search_runs(
        [found.experiment_id],
        f"tags.`mlflow.parentRunId` = '{grid_id}' and tags.`{LEVEL_TAG}` = 'cell'",
        max_results=SEARCH_LIMIT,
    )
    source = f"grid run {parent.info.run_name!r} ({grid_id}) at {uri}"
    try:
        table = _cell_table(parent.data.tags[METRICS_TAG], parent.data.tags[BASELINE_TAG], cells)
        ids = {(run.data.tags["shift"], run.data.tags["method"]): run.info.run_id for run in cells}
        plots = _read_index(Path(client.download_artifacts(grid_id, PLOT_INDEX, str(folder))))
        for plot in plots:
            client.download_artifacts(ids[plot.condition, plot.method], plot.path.name, str(folder))
    except (KeyError, ValueError, MlflowException) as error:
        raise RankuqError(
            f"{source}: {type(error).__name__}: {error}; it was not logged by this rankuq's "
            f"`rankuq run`: rerun the grid with --tracking-uri {uri}"
        ) from error
    _check(table, source)
    return Board(parent.info.run_name, table, plots)


def _grid_run(client: MlflowClient, experiment_id: str, uri: str, grid: str | None) -> Run:
    # The name is matched here, not in the filter string: MLflow's filter syntax has no escape for
    # a quote, so a name like "it's" would break (or change) the query.
    is_grid = f"tags.`{LEVEL_TAG}` = 'grid'"
    grids = client.search_runs(
        [experiment_id], is_grid, order_by=["attributes.start_time DESC"], max_results=SEARCH_LIMIT
    )
    runs = [run for run in grids if grid is None or run.info.run_name == grid]
    if not runs:
        names = sorted({run.info.run_name for run in grids})
        raise RankuqError(
            f"no grid run{f' named {grid!r}' if grid else ''} at {uri} (grids there: "
            f"{', '.join(names) or 'none'}); run `rankuq run --tracking-uri {uri}` first"
        )
    return runs[0]


def _cell_table(metrics_tag: str, baseline: str, cells: list[Run]) -> pd.DataFrame:
    columns = board_columns(json.loads(metrics_tag))
    rows = [
        {
            "condition": run.data.tags["shift"],
            "method": run.data.tags["method"],
            "seeds": int(run.data.params["seeds"]),
            "baseline": run.data.tags["method"] == baseline,
            **{column: run.data.metrics.get(mlflow_name(column), np.nan) for column in columns},
        }
        for run in sorted(cells, key=lambda run: int(run.data.tags[ROW_TAG]))
    ]
    return pd.DataFrame(rows, columns=[*KEYS, *columns])


# --- the paper layout -------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One cell: 'mean ± std', the relative change against the baseline and its significance mark."""

    value: str
    change: str = ""  # '+10.00%'; empty for the baseline itself or where undefined
    mark: str = ""  # BETTER, WORSE or empty
    best: bool = False
    mean: float = field(default=np.nan, compare=False)  # the numbers of ``value`` (NaN: missing)
    std: float = field(default=np.nan, compare=False)

    @property
    def note(self) -> str:
        return f"({' '.join(filter(None, (self.change, self.mark)))})" if self.change else ""

    def text(self, strong: str = "") -> str:
        """Plain text, the value wrapped in ``strong`` (e.g. '**') when it is the column's best."""
        value = f"{strong}{self.value}{strong}" if self.best else self.value
        return f"{value} {self.note}".rstrip()


def adjusted_p_values(table: pd.DataFrame) -> pd.DataFrame:
    """The ``M p`` columns adjusted for multiple comparisons: Benjamini–Hochberg (false discovery
    rate, ``scipy.stats.false_discovery_control``) over every test of one condition's table (each
    method against the baseline on each metric); NaN stays NaN (no test)."""
    columns = [f"{m} p" for m in metrics_of(table)]
    adjusted = table[columns].astype(float).copy()
    for _, rows in table.groupby("condition", sort=False):
        values = adjusted.loc[rows.index].to_numpy(copy=True)
        tested = ~np.isnan(values)
        if tested.any():
            values[tested] = false_discovery_control(values[tested], method="bh")
            adjusted.loc[rows.index] = values
    return adjusted


def paper_tables(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per condition (in board order): one row per method (index; the baseline's labelled so),
    its ``seeds`` and an ``Entry`` per metric, marked on the adjusted p-values."""
    metrics = metrics_of(table)
    baseline_means = table[table.baseline].set_index("condition")[metrics]
    # The baseline mean of each row's condition; NaN on the baseline's own row (no change shown).
    reference = baseline_means.reindex(table.condition).set_axis(table.index).where(~table.baseline, axis=0)
    best = _best(table, metrics)
    p_values = adjusted_p_values(table)
    out = pd.DataFrame(
        {
            "method": np.where(table.baseline, table.method + " (baseline)", table.method),
            "seeds": table.seeds,
            **{
                m: [
                    _entry(*values, lower_is_better(m))
                    for values in zip(
                        table[m], table[f"{m} std"], p_values[f"{m} p"], reference[m], best[m], strict=True
                    )
                ]
                for m in metrics
            },
        },
        index=table.index,
    )
    return {
        condition: rows.set_index("method") for condition, rows in out.groupby(table.condition, sort=False)
    }


def _best(table: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Per condition and metric, the rows whose shown (3-decimal) mean is the best one."""
    shown = table[metrics].round(3)
    grouped = shown.groupby(table.condition, sort=False)
    return pd.DataFrame(
        {m: shown[m] == grouped[m].transform("min" if lower_is_better(m) else "max") for m in metrics}
    )


def _entry(mean: float, std: float, p: float, reference: float, best: bool, lower: bool) -> Entry:
    if np.isnan(mean):
        return Entry(MISSING)
    if np.isnan(reference) or reference == 0:
        return Entry(_mean_std(mean, std), best=best, mean=mean, std=std)
    gain = reference - mean if lower else mean - reference
    mark = BETTER if p < ALPHA and gain > 0 else WORSE if p < ALPHA and gain < 0 else ""
    return Entry(_mean_std(mean, std), f"{(mean - reference) / abs(reference):+.2%}", mark, best, mean, std)


def footnote(table: pd.DataFrame, changes: bool = True) -> str:
    """The rules of the tables; ``changes``: the table shows the relative changes in brackets."""
    lower = [m for m in metrics_of(table) if lower_is_better(m)]
    bracket = (
        "; in brackets the relative change against the baseline method of the condition" if changes else ""
    )
    return (
        f"Mean ± std over seeds{bracket}; {BETTER} significantly better, {WORSE} significantly worse "
        "than the baseline "
        f"(two-sided paired t-test on per-query values; for ECE, ECE.all and ERCE a paired bootstrap "
        f"over queries, 1,000 resamples; p < {ALPHA} after the Benjamini–Hochberg correction over "
        "the tests of the condition's table)"
        + (f"; lower is better for {', '.join(lower)}" if lower else "")
        + f"; bold: the best value of a column; {MISSING}: not defined for the method."
    )


def markdown_text(text: object) -> str:
    """A name as Markdown text: HTML escaped (Markdown passes raw HTML through) and table pipes
    escaped, so a method or condition called ``<script>…`` or ``a|b`` shows as written."""
    return html.escape(str(text)).replace("|", "\\|")


def paper_markdown(board: Board) -> str:
    parts = [f"# Leaderboard: {markdown_text(board.name)}"]
    for condition, rows in paper_tables(board.table).items():
        shown = rows.astype(object).map(lambda cell: cell.text("**") if isinstance(cell, Entry) else cell)
        shown.index = shown.index.map(markdown_text)
        parts.append(f"## {markdown_text(condition)}\n\n{shown.reset_index().to_markdown(index=False)}")
    parts.append(footnote(board.table))
    return "\n\n".join(parts) + "\n"


def rich_tables(board: Board) -> list[Table]:
    """One compact table per condition: a row per method (its seed count below its name), a column
    per metric; each cell the mean with its significance mark and, below it, ± the std (the
    relative changes are the reports')."""
    tables = []
    for condition, rows in paper_tables(board.table).items():
        # No vertical rules, one space between columns: thirteen metrics fit 120 terminal columns.
        table = Table(title=f"{board.name}: {condition}", box=box.SIMPLE_HEAD, padding=0)
        table.add_column("method", justify="left")
        for metric in rows.columns[1:]:
            table.add_column(metric, justify="right", min_width=6)
        for method, row in rows.iterrows():
            name = Text.assemble(method, ("\n", ""), (f"{row.seeds} seeds", "dim"))
            table.add_row(name, *(_rich(entry) for entry in row.iloc[1:]))
        tables.append(table)
    return tables


def _rich(entry: Entry) -> Text:
    if np.isnan(entry.mean):
        return Text(entry.value)
    mean = (f"{entry.mean:.3f}", "bold" if entry.best else "")
    return Text.assemble(mean, entry.mark, f"\n±{entry.std:.3f}")


# --- LaTeX ------------------------------------------------------------------------------------

LATEX_MARKS = {BETTER: r"\textsuperscript{\dag}", WORSE: r"\textsuperscript{\ddag}"}


def paper_latex(board: Board) -> str:
    """One booktabs table per condition (pandas' ``Styler.to_latex``; method and metric names
    escaped), the footnote after them; needs ``\\usepackage{booktabs}``."""
    parts = []
    for condition, rows in paper_tables(board.table).items():
        styler = rows.reset_index().style.hide(axis="index").format(_latex, escape="latex")
        styler = styler.format_index(escape="latex", axis=1)
        caption = f"{board.name}: {condition}".translate(_LATEX_SPECIALS)
        parts.append(styler.to_latex(hrules=True, caption=caption, position_float="centering"))
    footer = footnote(board.table, changes=False).replace(BETTER, r"\dag{}").replace(WORSE, r"\ddag{}")
    return "\n".join(parts) + "\n% " + footer + "\n"


_LATEX_SPECIALS = str.maketrans(
    {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\~{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
)


def _latex(cell: object) -> str:
    if not isinstance(cell, Entry):
        return str(cell)  # a method name, escaped by the Styler, or a seed count
    if np.isnan(cell.mean):
        return "--"
    value = f"{cell.mean:.3f} \\pm {cell.std:.3f}"
    value = f"$\\mathbf{{{value}}}$" if cell.best else f"${value}$"
    return value + LATEX_MARKS.get(cell.mark, "")
