"""The findings' forest plot: every claim's effect with its 95 % CI beside the paper's effect.

One panel per unit, as the claims state their effects: relative changes (a share of the reference),
absolute differences, the inference-time claims (ratios of a GPU's seconds), and rankuq's own sanity
checks apart from the papers' claims. A floor claim is drawn as value − floor, as its paper effect is.
A claim's row is its pooled estimate over its conditions (one condition: that condition's); the
paper's effect is a diamond; the colour is the verdict. An untestable claim is a hollow grey marker at
its measured d, labelled with the precondition that failed. Every line draws the number the report's
table shows (``bench.findings.shown``): where conditions disagree (a mixed claim, an untestable one
whose conditions disagree) that is the range of their d, a broad pale bar without a point. Each axis
spans the estimates and the papers' effects (the relative one at most ±500 %): a CI that runs off it
(or has no end) ends in an arrow at the edge, and an estimate off it is an arrow at the edge with its
value beside it. Claims measured only as forward-pass counts on a CPU are left out
(``Measured.descriptive``: no row has an estimate from them). ``forest_data`` gives the numbers drawn.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rankuq.bench import statistics
from rankuq.bench.findings.claims import COST, Claim
from rankuq.bench.findings.rows import Row
from rankuq.bench.findings.shown import Shown, shown

COLOURS = {
    statistics.REPRODUCED: "tab:green",
    statistics.SMALLER: "tab:olive",
    statistics.OPPOSITE: "tab:orange",
    statistics.INCONCLUSIVE: "tab:blue",
    statistics.REFUTED: "tab:red",
    statistics.MIXED: "tab:purple",
}
UNTESTABLE_COLOUR = "tab:grey"

# name → (title, x label), top to bottom
PANELS = {
    "relative": ("relative effects", "d, % of the reference"),
    "absolute": ("absolute effects", "d, difference in the metric's units (a floor claim: value − floor)"),
    "cost": (
        "inference cost (a GPU's timings)",
        "d, inference time in multiples of another method's (an 'at least' claim: ratio − floor)",
    ),
    "sanity": (
        "sanity checks (rankuq's own, not the papers')",
        "d, difference in the metric's units (value − floor)",
    ),
}
RELATIVE_LIMIT = 500.0  # % either side: past it a relative effect over a near-zero reference says nothing
# An axis past ±100 % is linear within ±50 % and logarithmic beyond: the −14 % of one claim stays
# readable beside the +300 % of another.
LINEAR_WITHIN = 50.0
SMALLEST_SPAN = {"relative": 1.0}  # an axis spans at least this much (else 0.01) where all d are 0
FONT = 8  # points: labels and legend; the values beside arrows 7
ROW_INCHES = 0.27  # figure height per claim
PANEL_INCHES = 0.9  # per panel: its title and x label
LEGEND_INCHES = 0.6
RANGE_WIDTH, RANGE_ALPHA = 5.0, 0.35  # the range of conditions that disagree: a broad pale bar, no point


def panel_of(row: Row) -> str:
    """Sanity checks apart; then the timings (ratios of seconds: a unit of their own); then the scale."""
    if row.claim.sanity:
        return "sanity"
    return "cost" if row.claim.grid == COST else row.claim.scale


@dataclass(frozen=True)
class Item:
    """One claim's line of a panel, in the panel's units (relative: %): what the report's table shows
    (``bench.findings.shown``), its estimate and 95 % CI (``d`` None: no estimate), or the range of its
    conditions' d (``span``: they disagree, from ``low`` to ``high``), the paper's effect, how it is
    drawn."""

    label: str
    d: float | None
    low: float
    high: float
    paper: float | None
    colour: str
    hollow: bool  # untestable: the failed precondition is named in ``label``
    span: bool = False

    @property
    def drawn(self) -> bool:
        """Whether the line has anything to draw (an estimate or a range)."""
        return self.d is not None or self.span


def item(row: Row) -> Item | None:
    """The row's line: the table's number (``shown``), a judged claim in its verdict's colour, an
    untestable one hollow and grey, labelled with the precondition that failed; None for a claim not
    shown (not measured, or measured only as a CPU's forward-pass counts)."""
    found = shown(row)
    if row.verdict == statistics.UNTESTABLE:
        failed = next((m.failed for m in row.measured if m.failed is not None and not m.descriptive), None)
        label = f"{row.claim.id} (untestable: {failed.name if failed is not None else 'a precondition'}"
        label += ")" if found is not None else "; no estimate)"
        return _scaled(row.claim, label, found, UNTESTABLE_COLOUR, hollow=True)
    if found is None:
        return None
    return _scaled(row.claim, row.claim.id, found, COLOURS.get(row.verdict, "black"), hollow=False)


def _scaled(claim: Claim, label: str, found: Shown | None, colour: str, hollow: bool) -> Item:
    factor = 100.0 if claim.scale == "relative" else 1.0
    paper = None if claim.paper_effect is None else claim.paper_effect * factor
    if found is None:
        return Item(label, None, math.nan, math.nan, paper, colour, hollow)
    d = None if found.d is None else found.d * factor
    return Item(label, d, found.low * factor, found.high * factor, paper, colour, hollow, found.is_range)


FOREST_COLUMNS = ["claim", "panel", "verdict", "drawn", "d", "low", "high", "paper"]


def forest_data(rows: Sequence[Row]) -> pd.DataFrame:
    """The numbers the plot draws, one line per claim in its panel's units (relative: %): ``drawn``
    "estimate" (d and its 95 % CI), "range" (the conditions' lowest and highest d) or "none"."""
    lines = []
    for row in rows:
        line = item(row)
        if line is None:
            continue
        drawn = "range" if line.span else "estimate" if line.d is not None else "none"
        lines.append(
            [row.claim.id, panel_of(row), row.verdict, drawn, line.d, line.low, line.high, line.paper]
        )
    return pd.DataFrame(lines, columns=FOREST_COLUMNS)


def forest_plot(rows: Sequence[Row], path: Path) -> Path:
    """Draw the plot of every judged or untestable row to ``path`` (a PNG), written whole or not at all;
    the same rows give the same bytes."""
    figure = forest_figure(rows)
    staging = path.with_name(f".{path.stem}.tmp.png")
    figure.savefig(staging, dpi=110, metadata={"Software": None})  # no version or time: the same bytes
    plt.close(figure)
    staging.replace(path)
    return path


def forest_figure(rows: Sequence[Row]) -> Figure:
    """The plot's figure: a panel per unit that has a claim to show, the legend once above them."""
    panels: dict[str, list[Item]] = {name: [] for name in PANELS}
    for row in rows:
        line = item(row)
        if line is not None:
            panels[panel_of(row)].append(line)
    # estimates in the registry's order, then the claims without one at the bottom
    drawn = {name: sorted(lines, key=lambda i: not i.drawn) for name, lines in panels.items() if lines}
    rows_per_panel = [len(lines) + PANEL_INCHES / ROW_INCHES for lines in drawn.values()] or [1.0]
    height = LEGEND_INCHES + ROW_INCHES * sum(rows_per_panel)
    figure, axes = plt.subplots(
        len(rows_per_panel),
        1,
        figsize=(11, max(height, 2.0)),
        gridspec_kw={"height_ratios": rows_per_panel},
        squeeze=False,
    )
    for axis, (name, lines) in zip(axes[:, 0], drawn.items(), strict=False):
        _panel(axis, lines, name)
    if not drawn:
        axes[0, 0].text(0.5, 0.5, "no claim could be judged", ha="center", va="center", fontsize=FONT)
        axes[0, 0].set_axis_off()
    _legend(figure)
    figure.tight_layout(rect=(0, 0, 1, 1 - LEGEND_INCHES / figure.get_figheight()))
    return figure


def limits(lines: Sequence[Item], name: str) -> tuple[float, float]:
    """The axis: the estimates, the papers' effects and 0, widened by at most their span again for
    the CIs (one wide CI must not squash the rest), padded; relative: within ±``RELATIVE_LIMIT``."""
    values = [
        v for line in lines for v in (line.d, line.paper, *((line.low, line.high) if line.span else ()))
    ]
    points = [0.0, *(v for v in values if v is not None and math.isfinite(v))]
    low, high = min(points), max(points)
    span = max(high - low, SMALLEST_SPAN.get(name, 0.01))
    ends = [v for line in lines if line.d is not None for v in (line.low, line.high) if math.isfinite(v)]
    low, high = max(min([low, *ends]), low - span), min(max([high, *ends]), high + span)
    pad = 0.06 * (high - low)
    low, high = low - pad, high + pad
    if name == "relative":
        low, high = max(low, -RELATIVE_LIMIT), min(high, RELATIVE_LIMIT)
    return low, high


def _panel(axis: Axes, lines: Sequence[Item], name: str) -> None:
    edges = limits(lines, name)
    title, unit = PANELS[name]
    for y, line in enumerate(reversed(lines)):
        if not line.drawn:
            continue
        _interval(axis, line, y, edges)
        if line.d is not None:
            _point(axis, line.d, y, edges, Mark("o", line.colour, line.hollow), name)
        if line.paper is not None:
            _point(axis, line.paper, y, edges, Mark("D", "black", hollow=True, size=4), name, "paper ")
    axis.set_xlim(*edges)
    if name == "relative" and max(map(abs, edges)) > 2 * LINEAR_WITHIN:
        axis.set_xscale("symlog", linthresh=LINEAR_WITHIN, linscale=1.0)
        ticks = [
            t for t in (-500, -200, -100, -50, -25, 0, 25, 50, 100, 200, 500) if edges[0] <= t <= edges[1]
        ]
        axis.set_xticks(ticks, [f"{t:+d}" if t else "0" for t in ticks])
        unit += f" (linear within ±{LINEAR_WITHIN:.0f} %, logarithmic beyond)"
    axis.set_ylim(-0.7, len(lines) - 0.3)
    axis.axvline(0, color="grey", linewidth=0.8)
    axis.set_yticks(range(len(lines)), [line.label for line in reversed(lines)], fontsize=FONT)
    for tick, line in zip(axis.get_yticklabels(), reversed(lines), strict=True):
        tick.set_color(UNTESTABLE_COLOUR if line.hollow else "black")
    axis.set_title(title, fontsize=FONT + 1, loc="left")
    axis.set_xlabel(unit, fontsize=FONT)
    axis.tick_params(axis="x", labelsize=FONT)
    axis.grid(axis="x", color="0.9", linewidth=0.6)


def _interval(axis: Axes, line: Item, y: float, edges: tuple[float, float]) -> None:
    """The CI as a line with caps (a range of conditions' d: a broad pale bar); an end off the axis (an
    infinite one too) is an arrowhead at the edge instead of a cap."""
    low, high = edges
    ends = [v for v in (line.low, line.high) if not math.isnan(v)]
    if not ends:
        return
    kept = [v for v in ends if low <= v <= high]
    axis.plot(kept, [y] * len(kept), marker="|", linestyle="", color=line.colour, markersize=6)
    start, stop = max(min(ends), low), min(max(ends), high)
    dash = "--" if line.hollow and not line.span else "-"
    width, alpha = (RANGE_WIDTH, RANGE_ALPHA) if line.span else (1.1, 1.0)
    if start < stop:
        axis.plot([start, stop], [y, y], color=line.colour, linewidth=width, linestyle=dash, alpha=alpha)
    arrow = {"arrowstyle": "-|>", "color": line.colour, "lw": 1.1, "shrinkA": 0, "shrinkB": 0}
    for edge, back in ((high, -12), (low, 12)):
        if any(v > high if edge == high else v < low for v in ends):  # the head at the edge, in points
            axis.annotate("", xy=(edge, y), xytext=(back, 0), textcoords="offset points", arrowprops=arrow)


@dataclass(frozen=True)
class Mark:
    marker: str
    colour: str
    hollow: bool
    size: float = 5


def _point(
    axis: Axes, x: float, y: float, edges: tuple[float, float], mark: Mark, name: str, prefix: str = ""
) -> None:
    """A marker at ``x``, or, off the axis, a triangle at the edge pointing on and the value beside it."""
    low, high = edges
    inside = low <= x <= high
    right = x > high
    marker = mark.marker if inside else ">" if right else "<"
    fill = "none" if mark.hollow else "full"
    at = x if inside else high if right else low
    axis.plot(  # at the edge: drawn whole over the frame (clip_on)
        at,
        y,
        marker=marker,
        color=mark.colour,
        fillstyle=fill,
        markersize=mark.size,
        linestyle="",
        zorder=3,
        clip_on=inside,
    )
    if inside:
        return
    value = f"{x:+.0f} %" if name == "relative" else f"{x:+.3g}"
    axis.annotate(
        f"{prefix}{value}",
        xy=(at, y),
        xytext=(-7 if right else 7, 3),
        textcoords="offset points",
        ha="right" if right else "left",
        va="bottom",
        fontsize=FONT - 1,
        color=mark.colour,
    )


def _legend(figure: Figure) -> None:
    """Once per figure, above the panels: the verdicts' colours, untestable, the paper's effect."""
    handles = [_handle(colour, verdict) for verdict, colour in COLOURS.items()]
    handles.append(
        _handle(UNTESTABLE_COLOUR, "untestable (hollow, the failed precondition named)", hollow=True)
    )
    handles.append(_handle("black", "the paper's effect", hollow=True, marker="D"))
    handles.append(
        Line2D(
            [],
            [],
            color="grey",
            linewidth=RANGE_WIDTH,
            alpha=RANGE_ALPHA,
            label="the conditions' range of d (they disagree: not pooled)",
        )
    )
    figure.legend(
        handles=handles, loc="upper center", ncol=4, fontsize=FONT, frameon=False, bbox_to_anchor=(0.5, 1.0)
    )


def _handle(colour: str, label: str, hollow: bool = False, marker: str = "o") -> Line2D:
    fill: Literal["none", "full"] = "none" if hollow else "full"
    return Line2D(
        [], [], color=colour, marker=marker, fillstyle=fill, markersize=5, linestyle="", label=label
    )
