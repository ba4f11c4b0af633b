"""Plots logged as PNG artifacts."""

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt
import numpy as np


def reliability_diagram(
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]], path: Path, bins: int = 10
) -> Path:
    """Fraction relevant against mean predicted probability per equal-width bin, one line per label.

    ``curves`` maps a label (e.g. a seed) to (probabilities, binary relevance).
    """
    figure, axis = plt.subplots(figsize=(4.5, 4.5))
    axis.plot([0, 1], [0, 1], linestyle=":", color="grey", label="perfect calibration")
    edges = np.linspace(0, 1, bins + 1)
    for label, (probs, relevant) in curves.items():
        index = np.clip(np.digitize(probs, edges[1:-1], right=False), 0, bins - 1)
        counts = np.bincount(index, minlength=bins)
        kept = counts > 0
        confidence = np.bincount(index, weights=probs, minlength=bins)[kept] / counts[kept]
        accuracy = np.bincount(index, weights=relevant, minlength=bins)[kept] / counts[kept]
        axis.plot(confidence, accuracy, marker="o", label=label)
    axis.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean predicted P(relevant)", ylabel="fraction relevant")
    axis.legend(loc="upper left", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
