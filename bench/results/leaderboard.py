"""The leaderboard: per-condition aggregation over seeds, Benjamini–Hochberg adjusted p-values and the
paper-style tables."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control

from rankuq.bench.rundir.atomic import atomic_write

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
    layouts are ``bench.results.report.write_report``'s)."""
    atomic_write(path, board.to_csv(index=False))
    return path


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
