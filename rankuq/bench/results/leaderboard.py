"""The leaderboard: per-condition aggregation over seeds, Benjamini–Hochberg adjusted p-values and the
paper-style tables."""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from rankuq.atomic import atomic_write
from rankuq.bench import metrics
from rankuq.bench.metrics import lower_is_better
from rankuq.bench.results.columns import concat, in_parallel, strings, where

RANKING_METRICS = metrics.DEFAULT_METRICS
# Each column follows one paper's formula, one estimator for every method (docs/probes.md): ECE, ECE.all
# Penha & Hauff, 2021 (bench.metrics.ece); ERCE Cohen et al., 2021 (bench.probes.calibration); Brier
# Brier, 1950 and NLL the log loss (bench.metrics.scoring_rules); RA Penha & Hauff, 2021; nAUC
# Gisserot-Boukhlef et al., 2024.
LEADERBOARD_METRICS = (
    *RANKING_METRICS,
    *metrics.CALIBRATION_ERRORS,  # ECE, ECE.all, ERCE, Brier, NLL: as bench.metrics declares them
    "RA R@1",
    "RA AP",
    "RA nDCG@10",
    "nAUC AP u_max",
)
KEYS = ("condition", "method", "seeds", "baseline")
ALPHA = 0.05  # on the Benjamini–Hochberg adjusted p-values (``adjusted_p_values``)
BETTER, WORSE = "†", "‡"
MISSING = "—"


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


def write_csv(board: pd.DataFrame, path: Path) -> Path:
    """Write the raw numbers as ``path`` (a run's leaderboard.csv), atomically (the Markdown and HTML
    layouts are ``bench.results.report.write_report``'s)."""
    atomic_write(path, board.to_csv(index=False))
    return path


class Cells(NamedTuple):
    """One metric's cells, column-wise (a board of 200,000 rows is formatted in a second, where an
    object per cell took minutes), a row per method: ``value`` ('mean ± std', 3 decimals, or
    ``MISSING``; the mean alone for one seed), ``mean`` and ``std`` (the numbers; NaN mean: missing,
    NaN std: one seed), ``change`` against the baseline
    ('+10.00%'; empty for the baseline itself or where undefined), ``mark`` (``BETTER``, ``WORSE``
    or empty), ``note`` ('(+10.00% †)' or empty) and ``best`` (the column's best value). The text
    parts are Arrow string columns (``bench.results.columns``), the others numpy arrays."""

    value: pa.Array
    mean: np.ndarray
    std: np.ndarray
    change: pa.Array
    mark: pa.Array
    note: pa.Array
    best: np.ndarray

    def take(self, rows: np.ndarray) -> "Cells":
        """The cells of ``rows``; the rows in order (a board's conditions each together) are these."""
        if (rows == np.arange(len(rows))).all():
            return self
        return Cells(
            *(part.take(pa.array(rows)) if isinstance(part, pa.Array) else part[rows] for part in self)
        )


@dataclass(frozen=True)
class PaperTable:
    """One condition's table: the method labels (the baseline's labelled so), their seed counts and
    each metric's cells."""

    methods: list[str]
    seeds: list[object]
    cells: dict[str, Cells]

    def cell(self, method: str, metric: str) -> dict[str, object]:
        """One cell's parts by name (for reading a table, not for rendering one)."""
        row = self.methods.index(method)
        parts = self.cells[metric]._asdict().items()
        return {
            part: values[row].as_py() if isinstance(values, pa.Array) else values[row]
            for part, values in parts
        }


def adjusted_p_values(table: pd.DataFrame) -> pd.DataFrame:
    """The ``M p`` columns adjusted for multiple comparisons: Benjamini–Hochberg (false discovery
    rate, ``bench.statistics.corrections``) over every test of one condition's table (each
    method against the baseline on each metric); NaN stays NaN (no test)."""
    from rankuq.bench.statistics.corrections import corrected

    columns = [f"{m} p" for m in metrics_of(table)]
    adjusted = table[columns].to_numpy(dtype=float, copy=True)
    for rows in table.groupby("condition", sort=False).indices.values():
        adjusted[rows] = corrected(adjusted[rows], "bh")
    return pd.DataFrame(adjusted, index=table.index, columns=columns)


def paper_tables(table: pd.DataFrame) -> "PaperTables":
    """Per condition (in board order) its table, marked on the adjusted p-values."""
    metrics = metrics_of(table)
    baseline_means = table[table.baseline].set_index("condition")[metrics]
    # The baseline mean of each row's condition; NaN on the baseline's own row (no change shown).
    reference = baseline_means.reindex(table.condition).set_axis(table.index).where(~table.baseline, axis=0)
    best = _best(table, metrics)
    p_values = adjusted_p_values(table)
    methods = np.where(table.baseline, table.method.astype(str) + " (baseline)", table.method)
    # One seed has no spread: its cells show the mean alone, not "± 0.000".
    spread = np.where(pd.to_numeric(table.seeds, errors="coerce").to_numpy() == 1, np.nan, 0.0)

    def cells_of(m: str) -> Cells:
        std = table[f"{m} std"] + spread
        return _cells(table[m], std, p_values[f"{m} p"], reference[m], best[m], lower_is_better(m))

    cells = dict(zip(metrics, in_parallel(cells_of, metrics), strict=True))
    codes, conditions = pd.factorize(table.condition)  # in order of first appearance, as groupby's
    order = np.argsort(codes, kind="stable")  # each condition's rows together, in board order
    edges = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(conditions)))])
    rows = PaperTable(
        methods[order].tolist(),
        table.seeds.iloc[order].tolist(),
        {m: part.take(order) for m, part in cells.items()},
    )
    return PaperTables(rows, list(conditions), edges)


class PaperTables(Mapping[str, PaperTable]):
    """Each condition's table, by condition in board order: ``rows``, the board's rows with each
    condition's together (formatted once: a layout renders the whole board's columns and splits
    them at ``edges``), condition i's between ``edges[i]`` and ``edges[i + 1]``. A condition's
    ``PaperTable`` is sliced when asked for (slicing 100,000 conditions' cells took minutes)."""

    def __init__(self, rows: PaperTable, conditions: list[str], edges: np.ndarray) -> None:
        self.rows, self.edges = rows, edges
        self._index = {condition: i for i, condition in enumerate(conditions)}

    def __getitem__(self, condition: str) -> PaperTable:
        i = self._index[condition]
        start, stop = int(self.edges[i]), int(self.edges[i + 1])
        return PaperTable(
            self.rows.methods[start:stop],
            self.rows.seeds[start:stop],
            {m: Cells(*(part[start:stop] for part in cells)) for m, cells in self.rows.cells.items()},
        )

    def __contains__(self, condition: object) -> bool:  # Mapping's would slice the condition's table
        return condition in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)


def _best(table: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Per condition and metric, the rows whose shown (3-decimal) mean is the best one."""
    shown = table[metrics].round(3)
    grouped = shown.groupby(table.condition, sort=False)
    return pd.DataFrame(
        {m: shown[m] == grouped[m].transform("min" if lower_is_better(m) else "max") for m in metrics}
    )


def _cells(
    mean: pd.Series, std: pd.Series, p: pd.Series, reference: pd.Series, best: pd.Series, lower: bool
) -> Cells:
    """One metric's cells (the parts of ``PaperTable``), formatted a column at a time."""
    mean_, std_, reference_ = (np.asarray(values, dtype=float) for values in (mean, std, reference))
    defined = ~np.isnan(mean_)
    spread = defined & ~np.isnan(std_)  # NaN std: one seed, the mean alone
    mean_text = fixed(mean_, 3)
    value = where(defined, where(spread, concat(mean_text, fixed(std_, 3), sep=" ± "), mean_text), MISSING)
    compared = defined & ~np.isnan(reference_) & (reference_ != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = 100 * (mean_ - reference_) / np.abs(reference_)
    change = where(compared, concat(fixed(ratios, 2, "+"), "%"), "")
    mark_ = marks(mean_, reference_, np.where(compared, np.asarray(p, dtype=float), np.nan), lower)
    mark = strings(mark_)
    note = where(compared, concat("(", change, where(mark_ == "", "", concat(" ", mark)), ")"), "")
    return Cells(value, mean_, std_, change, mark, note, defined & np.asarray(best, dtype=bool))


def marks(mean: np.ndarray, reference: np.ndarray, p: np.ndarray, lower: bool) -> np.ndarray:
    """BETTER or WORSE where ``p`` is below ALPHA, by the sign of the gain over ``reference``
    (``lower``: lower is better); "" elsewhere (NaN p: no test)."""
    gain = reference - mean if lower else mean - reference
    significant = np.asarray(p, dtype=float) < ALPHA
    return np.select([significant & (gain > 0), significant & (gain < 0)], [BETTER, WORSE], "").astype(object)


def fixed(values: np.ndarray, decimals: int, plus: str = "") -> pa.Array:
    """``f"{value:{plus}.{decimals}f}"`` of each value (``decimals`` ≥ 1), as an Arrow string column,
    by integer arithmetic in numpy and Arrow's string kernels (a Python format per cell took seconds
    at 200,000 rows); the values within a hair of a rounding tie, or so large that the product errs
    by more, or not finite, are formatted by Python."""
    scaled = np.abs(values) * 10**decimals
    with np.errstate(invalid="ignore"):
        exact = np.isfinite(scaled) & (scaled < 2**31) & (np.abs(scaled % 1 - 0.5) > 1e-6)
    units = np.rint(np.where(exact, scaled, 0)).astype(np.int64)
    digits = pc.utf8_lpad(pc.cast(pa.array(units), pa.large_string()), decimals + 1, padding="0")
    whole, fraction = (
        pc.utf8_slice_codeunits(digits, 0, -decimals),
        pc.utf8_slice_codeunits(digits, -decimals),
    )
    out = concat(where(np.signbit(values), "-", plus), whole, ".", fraction)
    if exact.all():
        return out
    python = strings([f"{value:{plus}.{decimals}f}" for value in values[~exact].tolist()])
    return pc.replace_with_mask(out, pa.array(~exact), python)


def footnote(table: pd.DataFrame, changes: bool = True) -> str:
    """The rules of the tables; ``changes``: the table shows the relative changes in brackets."""
    lower = [m for m in metrics_of(table) if lower_is_better(m)]
    bracket = (
        "; in brackets the relative change against the baseline method of the condition" if changes else ""
    )
    return (
        f"Mean ± std over seeds (the mean alone for one seed){bracket}; {BETTER} significantly better, "
        f"{WORSE} significantly worse than the baseline "
        "(two-sided paired t-test on per-query values averaged over seeds, the papers' test, blind to the "
        "seeds' spread, which the findings' two-level bootstrap counts; "
        f"for ECE, ECE.all, ERCE, Brier and NLL a paired bootstrap "
        f"over queries, 1,000 resamples; p < {ALPHA} after the Benjamini–Hochberg correction over "
        "the tests of the condition's table)"
        + (f"; lower is better for {', '.join(lower)}" if lower else "")
        + f"; bold: the best value of a column; {MISSING}: not defined for the method."
    )
