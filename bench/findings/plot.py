"""The findings' forest plot: every judged claim's effect with its 95 % CI beside the paper's effect.

Two panels, as the claims state their effects: relative changes (a share of the reference) and
absolute differences. A claim's row is its pooled estimate over its conditions (one condition: that
condition's); the paper's effect is a diamond; the colour is the verdict.
"""

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt

from rankuq.bench.findings import statistics
from rankuq.bench.findings.rows import Row

COLOURS = {
    statistics.REPRODUCED: "tab:green",
    statistics.SMALLER: "tab:olive",
    statistics.INCONCLUSIVE: "tab:grey",
    statistics.REFUTED: "tab:red",
    statistics.MIXED: "tab:purple",
}


def forest_plot(rows: Sequence[Row], path: Path) -> Path:
    """Draw the plot of every row with an overall effect to ``path`` (a PNG), written whole or not at all."""
    panels = {
        scale: [row for row in rows if row.overall is not None and row.claim.scale == scale]
        for scale in ("relative", "absolute")
    }
    panels = {scale: shown for scale, shown in panels.items() if shown}
    heights = [max(len(shown), 1) for shown in panels.values()] or [1]
    figure, axes = plt.subplots(
        len(heights),
        1,
        figsize=(9, 1.2 + 0.28 * sum(heights)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for axis, (scale, shown) in zip(axes[:, 0], panels.items(), strict=False):
        _panel(axis, shown, scale)
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no claim could be judged", ha="center", va="center")
        axes[0, 0].set_axis_off()
    figure.tight_layout()
    staging = path.with_name(f".{path.stem}.tmp.png")
    figure.savefig(staging, dpi=110, metadata={"Software": None})
    plt.close(figure)
    staging.replace(path)
    return path


def _panel(axis: plt.Axes, rows: Sequence[Row], scale: str) -> None:
    factor = 100.0 if scale == "relative" else 1.0
    for y, row in enumerate(reversed(rows)):
        effect = row.overall
        assert effect is not None
        low, high = effect.interval()
        colour = COLOURS.get(row.verdict, "black")
        axis.errorbar(
            effect.d * factor,
            y,
            xerr=[[(effect.d - low) * factor], [(high - effect.d) * factor]],
            fmt="o",
            color=colour,
            capsize=2,
            markersize=4,
        )
        if row.claim.paper_effect is not None:
            axis.plot(
                row.claim.paper_effect * factor, y, marker="D", color="black", markersize=4, fillstyle="none"
            )
    axis.axvline(0, color="grey", linewidth=0.8)
    axis.set_yticks(range(len(rows)), [row.claim.id for row in reversed(rows)], fontsize=7)
    axis.set_xlabel("d, % of the reference" if scale == "relative" else "d, absolute difference", fontsize=8)
    axis.tick_params(axis="x", labelsize=7)
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="", label=v) for v, c in COLOURS.items()]
    handles.append(
        plt.Line2D([], [], color="black", marker="D", fillstyle="none", linestyle="", label="paper")
    )
    axis.legend(handles=handles, fontsize=6, loc="lower right", framealpha=0.8)
