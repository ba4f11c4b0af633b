"""The findings' forest plot: every claim's effect with its 95 % CI beside the paper's effect.

One panel per unit, as the claims state their effects: relative changes (a share of the reference),
absolute differences, the inference-time claims (ratios of a GPU's seconds), and rankuq's own sanity
checks apart from the papers' claims. A floor claim is drawn as value − floor, as its paper effect is.
A claim's row is its pooled estimate over its conditions (one condition: that condition's); the
paper's effect is a diamond; the colour is the verdict. An untestable claim is a hollow grey marker at
its measured d, labelled with the precondition that failed. Each axis spans the estimates and the
papers' effects (the relative one at most ±500 %): a CI that runs off it ends in an arrow at the edge,
and an estimate off it is an arrow at the edge with its value beside it. Claims measured only as
forward-pass counts on a CPU are left out (``Measured.descriptive``: no row has an estimate from them).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import COST, Claim
from rankuq.bench.findings.rows import Row

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


def panel_of(row: Row) -> str:
    """Sanity checks apart; then the timings (ratios of seconds: a unit of their own); then the scale."""
    if row.claim.sanity:
        return "sanity"
    return "cost" if row.claim.grid == COST else row.claim.scale


def offset(claim: Claim) -> float:
    """What d is shown against: a floor claim's d is its value − the floor, as the paper's effect is."""
    return claim.floor if claim.floor is not None else 0.0


@dataclass(frozen=True)
class Item:
    """One claim's line of a panel, in the panel's units (relative: %): its estimate and 95 % CI
    (``d`` None: untestable with no estimate), the paper's effect, how it is drawn."""

    label: str
    d: float | None
    low: float
    high: float
    paper: float | None
    colour: str
    hollow: bool  # untestable: the failed precondition is named in ``label``


def item(row: Row) -> Item | None:
    """The row's line: a judged claim at its overall estimate, an untestable one at its measured d;
    None for a claim not shown (not measured, or measured only as a CPU's forward-pass counts)."""
    if row.verdict == statistics.UNTESTABLE:
        return _untestable(row)
    if row.overall is None:
        return None
    return _scaled(row.claim, row.claim.id, row.overall, COLOURS.get(row.verdict, "black"), hollow=False)


def _untestable(row: Row) -> Item:
    """At the overall estimate, else the first condition's with one (never a CPU's count), labelled
    with the precondition that failed there (the overall: the first that failed)."""
    measured = [m for m in row.measured if not m.descriptive]
    first = next((m for m in measured if m.effect is not None), None)
    estimate = row.overall if row.overall is not None else first.effect if first is not None else None
    named = ([first] if row.overall is None and first is not None else []) + measured
    failed = next((m.failed for m in named if m.failed is not None), None)
    label = f"{row.claim.id} (untestable: {failed.name if failed is not None else 'a precondition'}"
    if estimate is None:
        return _scaled(row.claim, f"{label}; no estimate)", None, UNTESTABLE_COLOUR, hollow=True)
    return _scaled(row.claim, f"{label})", estimate, UNTESTABLE_COLOUR, hollow=True)


def _scaled(
    claim: Claim, label: str, estimate: statistics.Estimate | None, colour: str, hollow: bool
) -> Item:
    factor = 100.0 if claim.scale == "relative" else 1.0
    paper = None if claim.paper_effect is None else claim.paper_effect * factor
    if estimate is None:
        return Item(label, None, math.nan, math.nan, paper, colour, hollow)
    shift = offset(claim)
    d, low, high = ((value - shift) * factor for value in (estimate.d, *estimate.interval()))
    return Item(label, d, low, high, paper, colour, hollow)


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
    shown = {name: sorted(lines, key=lambda i: i.d is None) for name, lines in panels.items() if lines}
    rows_per_panel = [len(lines) + PANEL_INCHES / ROW_INCHES for lines in shown.values()] or [1.0]
    height = LEGEND_INCHES + ROW_INCHES * sum(rows_per_panel)
    figure, axes = plt.subplots(
        len(rows_per_panel),
        1,
        figsize=(11, max(height, 2.0)),
        gridspec_kw={"height_ratios": rows_per_panel},
        squeeze=False,
    )
    for axis, (name, lines) in zip(axes[:, 0], shown.items(), strict=False):
        _panel(axis, lines, name)
    if not shown:
        axes[0, 0].text(0.5, 0.5, "no claim could be judged", ha="center", va="center", fontsize=FONT)
        axes[0, 0].set_axis_off()
    _legend(figure)
    figure.tight_layout(rect=(0, 0, 1, 1 - LEGEND_INCHES / figure.get_figheight()))
    return figure


def limits(lines: Sequence[Item], name: str) -> tuple[float, float]:
    """The axis: the estimates, the papers' effects and 0, widened by at most their span again for
    the CIs (one wide CI must not squash the rest), padded; relative: within ±``RELATIVE_LIMIT``."""
    points = [0.0, *(v for line in lines for v in (line.d, line.paper) if v is not None and math.isfinite(v))]
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
        if line.d is None:
            continue
        _interval(axis, line, y, edges)
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
    """The CI as a line with caps; an end off the axis is an arrowhead at the edge instead of a cap."""
    low, high = edges
    ends = [v for v in (line.low, line.high) if math.isfinite(v)]
    if not ends:
        return
    kept = [v for v in ends if low <= v <= high]
    axis.plot(kept, [y] * len(kept), marker="|", linestyle="", color=line.colour, markersize=6)
    start, stop = max(min(ends), low), min(max(ends), high)
    dash = "--" if line.hollow else "-"
    if start < stop:
        axis.plot([start, stop], [y, y], color=line.colour, linewidth=1.1, linestyle=dash)
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
    figure.legend(
        handles=handles, loc="upper center", ncol=4, fontsize=FONT, frameon=False, bbox_to_anchor=(0.5, 1.0)
    )


def _handle(colour: str, label: str, hollow: bool = False, marker: str = "o") -> Line2D:
    fill: Literal["none", "full"] = "none" if hollow else "full"
    return Line2D(
        [], [], color=colour, marker=marker, fillstyle=fill, markersize=5, linestyle="", label=label
    )
