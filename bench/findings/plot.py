"""The findings' forest plot: every judged claim's effect with its 95 % CI beside the paper's effect.

Three panels, as the claims state their effects: relative changes (a share of the reference), absolute
differences, and the inference-time claims (ratios of seconds). A floor claim is drawn as value − floor,
as its paper effect is. A claim's row is its pooled estimate over its conditions (one condition: that
condition's); the paper's effect is a diamond; the colour is the verdict.
"""

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import COST, Claim
from rankuq.bench.findings.rows import Row

COLOURS = {
    statistics.REPRODUCED: "tab:green",
    statistics.SMALLER: "tab:olive",
    statistics.INCONCLUSIVE: "tab:grey",
    statistics.REFUTED: "tab:red",
    statistics.MIXED: "tab:purple",
}


PANELS = {
    "relative": "d, % of the reference",
    "absolute": "d, absolute difference",
    "cost": "d, inference time in multiples of another method's (method_cost)",
}


def panel_of(row: Row) -> str:
    """Relative claims, absolute ones, and the timings (ratios of seconds: another unit again)."""
    return "cost" if row.claim.grid == COST else row.claim.scale


def offset(claim: Claim) -> float:
    """What d is shown against: a floor claim's d is its value − the floor, as the paper's effect is."""
    return claim.floor if claim.floor is not None else 0.0


def forest_plot(rows: Sequence[Row], path: Path) -> Path:
    """Draw the plot of every row with an overall effect to ``path`` (a PNG), written whole or not at all."""
    panels = {
        name: [row for row in rows if row.overall is not None and panel_of(row) == name] for name in PANELS
    }
    panels = {name: shown for name, shown in panels.items() if shown}
    heights = [max(len(shown), 1) for shown in panels.values()] or [1]
    figure, axes = plt.subplots(
        len(heights),
        1,
        figsize=(11, 1.4 + 0.28 * sum(heights) + 0.5 * len(heights)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for axis, (name, shown) in zip(axes[:, 0], panels.items(), strict=False):
        _panel(axis, shown, name)
    if not panels:
        axes[0, 0].text(0.5, 0.5, "no claim could be judged", ha="center", va="center")
        axes[0, 0].set_axis_off()
    figure.tight_layout()
    staging = path.with_name(f".{path.stem}.tmp.png")
    figure.savefig(staging, dpi=110, metadata={"Software": None})
    plt.close(figure)
    staging.replace(path)
    return path


def _panel(axis: plt.Axes, rows: Sequence[Row], name: str) -> None:
    factor = 100.0 if name == "relative" else 1.0
    for y, row in enumerate(reversed(rows)):
        effect = row.overall
        assert effect is not None
        low, high = effect.interval()
        shift = offset(row.claim)
        colour = COLOURS.get(row.verdict, "black")
        axis.errorbar(
            (effect.d - shift) * factor,
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
    axis.set_xlabel(PANELS[name], fontsize=8)
    axis.tick_params(axis="x", labelsize=7)
    handles = [plt.Line2D([], [], color=c, marker="o", linestyle="", label=v) for v, c in COLOURS.items()]
    handles.append(
        plt.Line2D([], [], color="black", marker="D", fillstyle="none", linestyle="", label="paper")
    )
    axis.legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.8)
