"""The PNG plots a run logs: reliability diagrams, line plots and the leaderboard's overview."""

import io
import re

import matplotlib.pyplot as plt
import numpy as np
from PIL import Image

from rankuq.bench.plots import line_plot, overview_png, reliability_diagram, reliability_figure
from rankuq.bench.results.boards import read_run_dir

BLUE, ORANGE, GREY = [31, 119, 180], [255, 127, 14], [128, 128, 128]  # matplotlib's C0, C1; grey


def _pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB")).reshape(-1, 3).astype(int)


def _count(pixels: np.ndarray, colour: list[int]) -> int:
    return int((np.abs(pixels - colour).sum(axis=1) < 30).sum())


def test_a_reliability_diagram_is_a_png_with_its_bin_counts_below_and_its_legend_beside(wikiqa, tmp_path):
    probs = wikiqa["prob_mean"].to_numpy()
    relevant = wikiqa["label"].to_numpy() > 0
    path = reliability_diagram({"seed 0": (probs, relevant)}, tmp_path / "reliability.png")
    assert path == tmp_path / "reliability.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(path)
    image.verify()  # a whole PNG: every chunk's CRC checks
    image = Image.open(path)
    assert (image.format, image.size) == ("PNG", (800, 600))  # 8 × 6 in at 100 dpi (was 650 wide)
    assert _count(_pixels(image), BLUE) > 200  # the seed's line and markers
    assert _count(_pixels(image), ORANGE) == 0  # one curve only
    rows = np.asarray(image.convert("RGB")).astype(int)
    assert _count(rows[470:].reshape(-1, 3), BLUE) > 50  # the pairs per bin, in the lower panel
    assert _count(rows[:100, 600:].reshape(-1, 3), BLUE) > 10  # the legend's sample, right of the axes


def test_each_curve_of_a_reliability_diagram_is_drawn_in_its_colour(wikiqa, tmp_path):
    probs = wikiqa["prob_mean"].to_numpy()
    relevant = wikiqa["label"].to_numpy() > 0
    weights = np.where(relevant, 2.0, 1.0)
    curves = {"equal width": (probs, relevant), "balanced": (probs, relevant, weights)}
    image = Image.open(reliability_diagram(curves, tmp_path / "two.png", bins=15, adaptive=True, title="t"))
    assert image.size == (800, 600)
    assert _count(_pixels(image), BLUE) > 200 and _count(_pixels(image), ORANGE) > 200


def _count_labels(adaptive: bool, probs: np.ndarray, relevant: np.ndarray) -> list[str]:
    """The shown tick labels of a reliability diagram's counts axis (those within its limits)."""
    figure = reliability_figure({"seed 0": (probs, relevant)}, bins=15, adaptive=adaptive)
    figure.canvas.draw()
    below = figure.axes[1]
    low, high = below.get_ylim()
    ticks = [*below.yaxis.get_major_ticks(), *below.yaxis.get_minor_ticks()]
    labels = [t.label1.get_text() for t in ticks if low <= t.get_loc() <= high and t.label1.get_text()]
    plt.close(figure)
    return labels


def test_the_counts_axis_reads_plain_counts(wikiqa):
    probs = wikiqa["prob_mean"].to_numpy()
    relevant = wikiqa["label"].to_numpy() > 0
    # Equal-mass bins hold about 411 pairs each: matplotlib's log axis wrote "4.1×10²" and the like.
    adaptive = _count_labels(True, probs, relevant)
    assert len(adaptive) >= 2 and all(re.fullmatch(r"\d[\d,]*", label) for label in adaptive), adaptive
    # Equal-width bins, near 0 most pairs: a log axis, labelled at powers of ten.
    equal = _count_labels(False, probs, relevant)
    assert len(equal) >= 2 and set(equal) <= {"1", "10", "100", "1,000", "10,000"}, equal


def test_a_line_plot_draws_bounds_in_grey_and_methods_in_colour(tmp_path):
    x = np.linspace(0, 1, 11)
    series = {"ensemble": (x, x**2), "oracle": (x, np.ones_like(x)), "random": (x, x)}
    path = line_plot(series, tmp_path / "abstention.png", xlabel="abstention rate", ylabel="AP")
    image = Image.open(path)
    assert (image.format, image.size) == ("PNG", (800, 450))  # 8 × 4.5 in at 100 dpi
    pixels = _pixels(image)
    assert _count(pixels, BLUE) > 100 and _count(pixels, GREY) > 100  # tab20's first colour; the bounds
    right = np.asarray(image.convert("RGB")).astype(int)[:, 680:].reshape(-1, 3)
    assert _count(right, BLUE) > 10  # the legend, beside the axes: it covers no curve
    only_bounds = line_plot({"oracle": (x, x)}, tmp_path / "bounds.png", xlabel="x", ylabel="y")
    assert _count(_pixels(Image.open(only_bounds)), BLUE) == 0


def test_the_overview_plot_draws_every_method_and_metric_with_error_bars(run_dir):
    board = read_run_dir(run_dir)
    image = Image.open(io.BytesIO(overview_png(board.table, ["R@1", "ECE", "nAUC AP u_max"])))
    assert image.format == "PNG" and image.width > 3 * image.height  # three panels side by side
    pixels = np.asarray(image.convert("RGB")).reshape(-1, 3).astype(int)
    # Both conditions' colours (matplotlib's first two: #1f77b4, #ff7f0e) are drawn.
    for colour in ([31, 119, 180], [255, 127, 14]):
        assert (np.abs(pixels - colour).sum(axis=1) < 30).sum() > 100
