"""Plots logged as PNG artifacts."""

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from rankuq.bench.metrics.ece import bin_sums

OVERVIEW_METHODS, OVERVIEW_CONDITIONS = 60, 20  # the most one overview plot draws
# A per-cell plot's width: the report shows it at this size (``PLOT_WIDTH_PX``), legend beside the axes.
PLOT_WIDTH_IN, PLOT_DPI = 8.0, 100
PLOT_WIDTH_PX = round(PLOT_WIDTH_IN * PLOT_DPI)


def reliability_diagram(
    curves: Mapping[str, tuple[np.ndarray, ...]],
    path: Path,
    bins: int = 10,
    adaptive: bool = False,
    title: str | None = None,
    subject: str = "",
) -> Path:
    """``reliability_figure`` as a PNG at ``path``."""
    figure = reliability_figure(curves, bins, adaptive, title, subject)
    figure.savefig(path, dpi=PLOT_DPI)
    plt.close(figure)
    return path


def reliability_figure(
    curves: Mapping[str, tuple[np.ndarray, ...]],
    bins: int = 10,
    adaptive: bool = False,
    title: str | None = None,
    subject: str = "",
) -> Figure:
    """Fraction relevant against mean predicted probability per bin, one line per label, and below
    it the number of pairs in each bin (``_count_axis``: the bins near 0 hold most pairs), titled by
    ``subject`` (whose predictions: method × condition) over ``title``.

    ``curves`` maps a label (a seed, a number of non-relevant candidates, …) to (probabilities,
    binary relevance[, row weights such as the balanced ECE's]). Bins are those of the ECE
    (``bench.metrics.ece.bin_sums``): equal-width, or equal-mass with ``adaptive``; empty bins are
    not drawn. The legend is outside the axes, so it covers no point.
    """
    figure, (axis, below) = plt.subplots(
        2, 1, figsize=(PLOT_WIDTH_IN, 6), sharex=True, height_ratios=(3, 1), layout="constrained"
    )
    drawn = []
    axis.plot([0, 1], [0, 1], linestyle=":", color="grey", label="perfect calibration")
    for label, (probs, relevant, *weights) in curves.items():
        counts, prob_sums, relevant_sums = bin_sums(
            np.asarray(probs, np.float64), relevant, bins, adaptive, *weights
        )
        kept = counts > 0
        confidence = prob_sums[kept] / counts[kept]
        (line,) = axis.plot(confidence, relevant_sums[kept] / counts[kept], marker="o", label=label)
        below.plot(confidence, counts[kept], marker=".", color=line.get_color())
        drawn.append(counts[kept])
    axis.set(xlim=(0, 1), ylim=(0, 1), ylabel="fraction relevant")
    below.set(xlabel="mean predicted P(relevant)", ylabel="pairs per bin")
    _count_axis(below, np.concatenate(drawn) if drawn else np.ones(1))
    _title(axis, subject, title)
    figure.legend(loc="outside right upper")
    return figure


def line_plot(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]],
    path: Path,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    log_x: bool = False,
    dashed: tuple[str, ...] = ("oracle", "random"),
    subject: str = "",
) -> Path:
    """One line per label from (x, y): R@1 against risk aversion b, performance against
    abstention rate, nAUC against reference size, titled by ``subject`` over ``title``. Labels in
    ``dashed`` (bounds such as the oracle and random) are drawn in grey, dashed then dotted; the
    legend is outside the axes."""
    figure, axis = plt.subplots(figsize=(PLOT_WIDTH_IN, 4.5), layout="constrained")
    colours = iter(plt.cm.tab20(np.linspace(0, 1, 20)))
    for label, (x, y) in series.items():
        style: dict[str, Any]
        if label in dashed:
            style = {"linestyle": ("--", ":", "-.")[dashed.index(label) % 3], "color": "grey"}
        else:
            style = {"color": next(colours)}
        axis.plot(x, y, marker="o", markersize=3, label=label, **style)
    axis.set(xlabel=xlabel, ylabel=ylabel, xscale="log" if log_x else "linear")
    _title(axis, subject, title)
    figure.legend(loc="outside right upper")  # beside the axes: it covers no curve
    figure.savefig(path, dpi=PLOT_DPI)
    plt.close(figure)
    return path


def _count_axis(axis: Axes, counts: np.ndarray) -> None:
    """Counts as plain numbers ("235", "1,000"; matplotlib's log axis writes 2.35×10²): a log scale
    where they span a decade or more (equal-width bins near 0 hold most pairs), labelled at its
    powers of ten only, else linear (equal-mass bins hold about as many pairs each)."""
    plain = FuncFormatter(lambda value, _: f"{value:,.0f}")
    positive = counts[counts > 0]
    if positive.size and positive.max() >= 10 * positive.min():
        axis.set_yscale("log")
        axis.yaxis.set_minor_formatter(NullFormatter())
    else:
        axis.ticklabel_format(axis="y", style="plain", useOffset=False)
    axis.yaxis.set_major_formatter(plain)


def _title(axis: Axes, subject: str, title: str | None) -> None:
    """Whose plot it is (method × condition) on the first line, so a PNG opened alone (plots/,
    MLflow's artifacts) says what it shows; which plot it is below."""
    heading = "\n".join(part for part in (subject, title) if part)
    if heading:
        axis.set_title(heading, fontsize="medium")


def overview_png(board: pd.DataFrame, metrics: Sequence[str], columns: int = 4) -> bytes | None:
    """A leaderboard at a glance, as PNG bytes: one panel per metric, a row per method, its mean
    over seeds with ± std error bars, one colour per condition (``board``: a leaderboard's
    ``condition``, ``method``, ``M`` and ``M std`` columns). Undefined values are not drawn.
    None for more than ``OVERVIEW_METHODS`` methods or ``OVERVIEW_CONDITIONS`` conditions: no glance
    takes them in, and the figure grows with the methods (2,000 took minutes to draw)."""
    methods = list(dict.fromkeys(board.method))
    conditions = list(dict.fromkeys(board.condition))
    if len(methods) > OVERVIEW_METHODS or len(conditions) > OVERVIEW_CONDITIONS:
        return None
    rows = -(-len(metrics) // columns)
    figure, axes = plt.subplots(
        rows,
        min(columns, len(metrics)),
        figsize=(3.2 * min(columns, len(metrics)), 1.4 + (0.4 + 0.35 * len(methods)) * rows),
        squeeze=False,
        sharey=True,
    )
    offsets = np.linspace(-0.2, 0.2, len(conditions)) if len(conditions) > 1 else np.zeros(1)
    for axis, metric in zip(axes.flat, metrics, strict=False):
        for offset, condition in zip(offsets, conditions, strict=True):
            rows_of = board[board.condition == condition].set_index("method").reindex(methods)
            position = np.arange(len(methods)) + offset
            axis.errorbar(
                rows_of[metric], position, xerr=rows_of[f"{metric} std"], fmt="o", capsize=3, label=condition
            )
        axis.set_title(metric, fontsize="medium")
        axis.grid(axis="x", alpha=0.3)
    for axis in axes.flat[len(metrics) :]:
        axis.set_visible(False)
    axes[0, 0].set(yticks=range(len(methods)), yticklabels=methods)
    axes[0, 0].invert_yaxis()
    figure.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=min(4, len(conditions)))
    figure.tight_layout(rect=(0, 0.1, 1, 1))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()
