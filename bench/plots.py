"""Plots logged as PNG artifacts."""

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt
import numpy as np

from rankuq.bench.metrics.ece import bin_sums


def reliability_diagram(
    curves: Mapping[str, tuple[np.ndarray, ...]],
    path: Path,
    bins: int = 10,
    adaptive: bool = False,
    title: str | None = None,
) -> Path:
    """Fraction relevant against mean predicted probability per bin, one line per label.

    ``curves`` maps a label (a seed, a number of non-relevant candidates, …) to (probabilities,
    binary relevance[, row weights such as the balanced ECE's]). Bins are those of the ECE
    (``bench.metrics.ece.bin_sums``): equal-width, or equal-mass with ``adaptive``; empty bins are
    not drawn.
    """
    figure, axis = plt.subplots(figsize=(4.5, 4.5))
    axis.plot([0, 1], [0, 1], linestyle=":", color="grey", label="perfect calibration")
    for label, (probs, relevant, *weights) in curves.items():
        counts, prob_sums, relevant_sums = bin_sums(
            np.asarray(probs, np.float64), relevant, bins, adaptive, *weights
        )
        kept = counts > 0
        axis.plot(prob_sums[kept] / counts[kept], relevant_sums[kept] / counts[kept], marker="o", label=label)
    axis.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean predicted P(relevant)", ylabel="fraction relevant")
    if title:
        axis.set_title(title, fontsize="medium")
    axis.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def line_plot(
    series: Mapping[str, tuple[np.ndarray, np.ndarray]],
    path: Path,
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    log_x: bool = False,
    dashed: tuple[str, ...] = ("oracle", "random"),
) -> Path:
    """One line per label from (x, y): R@1 against risk aversion b, performance against
    abstention rate, nAUC against reference size. Labels in ``dashed`` (bounds such as the
    oracle and random) are drawn in grey, dashed then dotted."""
    figure, axis = plt.subplots(figsize=(5, 4))
    colours = iter(plt.cm.tab20(np.linspace(0, 1, 20)))
    for label, (x, y) in series.items():
        if label in dashed:
            style = {"linestyle": ("--", ":", "-.")[dashed.index(label) % 3], "color": "grey"}
        else:
            style = {"color": next(colours)}
        axis.plot(x, y, marker="o", markersize=3, label=label, **style)
    axis.set(xlabel=xlabel, ylabel=ylabel, xscale="log" if log_x else "linear")
    if title:
        axis.set_title(title, fontsize="medium")
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
