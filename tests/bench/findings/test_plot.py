"""The findings' forest plot (bench.findings.plot): a panel per unit and one for the sanity checks, axes
within ±500 % with arrows for what runs off them, untestable claims as hollow markers."""

import struct
from dataclasses import replace

import pytest
from matplotlib.axes import Axes
from matplotlib.text import Annotation

from rankuq.bench import statistics
from rankuq.bench.findings.claims import COST, Check, Claim
from rankuq.bench.findings.plot import RELATIVE_LIMIT, UNTESTABLE_COLOUR, forest_figure, forest_plot
from rankuq.bench.findings.rows import Measured, Row
from rankuq.bench.findings.verdicts import assess, judge_all


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return struct.unpack(">II", data[16:24])


def estimate(d: float, se: float) -> statistics.Pooled:
    """An estimate with the 95 % CI d ± 1.96 se."""
    return statistics.Pooled(d, se, 0.5, 0.0, float("nan"), 1, (1.0,), (0,))


def judged_row(claim: Claim, d: float, se: float, verdict: str = statistics.INCONCLUSIVE) -> Row:
    return Row(claim, None, (), verdict, "", overall=estimate(d, se))


def untestable_row(claim: Claim, d: float | None, precondition: str = "works_in_domain") -> Row:
    failed = Check(precondition, False, "bert is not above BM25")  # type: ignore[arg-type]
    effect = None if d is None else estimate(d, 0.05)
    measured = Measured("c", effect, 0.1, 0.1, (failed,), statistics.UNTESTABLE)  # type: ignore[arg-type]
    return Row(claim, None, (measured,), statistics.UNTESTABLE, "")


def panels(rows: list[Row]) -> dict[str, Axes]:
    figure = forest_figure(rows)
    return {axis.get_title(loc="left"): axis for axis in figure.axes}


def arrows(axis: Axes) -> list[Annotation]:
    return [t for t in axis.texts if isinstance(t, Annotation) and t.arrow_patch is not None]


@pytest.fixture
def judged(run_of, values, lower_ece) -> list[Row]:
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
        }
    )
    return judge_all([assess(lower_ece, [run])])


def test_a_judged_claim_draws_a_row_and_more_claims_a_taller_plot(judged, tmp_path):
    one = forest_plot(judged, tmp_path / "one.png")
    assert judged[0].verdict == statistics.REPRODUCED and not list(tmp_path.glob(".*"))
    many = forest_plot(judged * 12, tmp_path / "many.png")
    (width, short), (same_width, tall) = png_size(one), png_size(many)
    assert width == same_width and tall > short


def test_with_nothing_judged_the_plot_says_so(judged, tmp_path):
    unjudged = [replace(judged[0], overall=None, verdict=statistics.NOT_MEASURED)]
    assert png_size(forest_plot(unjudged, tmp_path / "none.png"))[0] > 0


def test_a_5000_percent_ci_stays_off_a_500_percent_axis_with_arrows(lower_ece):
    wide = replace(lower_ece, id="002-threshold-90")
    far = replace(lower_ece, id="far", paper_effect=None)
    rows = [judged_row(lower_ece, -0.14, 0.03), judged_row(wide, 0.05, 25.0), judged_row(far, 80.0, 1.0)]
    axis = panels(rows)["relative effects"]
    low, high = axis.get_xlim()
    assert -RELATIVE_LIMIT <= low < -14 and 14 < high <= RELATIVE_LIMIT  # −14 % and the paper's effect shown
    directions = sorted(a.xy[0] for a in arrows(axis))  # the wide CI's two ends, the far one's
    assert directions == pytest.approx([low, high, high])
    values = [t.get_text() for t in axis.texts if t.get_text()]
    assert values == ["+8000 %"]  # the estimate off the axis: its value beside the edge
    # A CI within the estimates' span of them widens the axis instead: no arrow.
    near = panels([judged_row(lower_ece, -0.14, 0.03), judged_row(wide, 0.05, 0.05)])["relative effects"]
    assert not arrows(near) and near.get_xlim()[1] > (0.05 + 1.96 * 0.05) * 100


def test_untestable_claims_are_hollow_grey_at_their_d_and_name_the_precondition(lower_ece):
    rows = [
        judged_row(lower_ece, -0.14, 0.03, statistics.REPRODUCED),
        untestable_row(replace(lower_ece, id="gated"), 0.58),
        untestable_row(replace(lower_ece, id="blank"), None, "shift_hurts"),
    ]
    axis = panels(rows)["relative effects"]
    labels = [t.get_text() for t in axis.get_yticklabels()]
    # top to bottom: the registry's order, the claim without an estimate at the bottom
    assert labels == [
        "blank (untestable: shift_hurts; no estimate)",
        "gated (untestable: works_in_domain)",
        "000-ece",
    ]
    points = [line for line in axis.lines if line.get_marker() == "o"]
    hollow = [line for line in points if line.get_fillstyle() == "none"]
    assert len(points) == 2 and len(hollow) == 1 and hollow[0].get_color() == UNTESTABLE_COLOUR
    assert hollow[0].get_xdata()[0] == pytest.approx(58.0) and hollow[0].get_ydata()[0] == 1
    assert axis.get_yticklabels()[1].get_color() == UNTESTABLE_COLOUR


def test_sanity_checks_have_a_panel_of_their_own_and_a_cpu_s_counts_none(lower_ece):
    floor = replace(
        lower_ece,
        id="fit-wikiqa-ap-floor",
        paper=None,
        scale="absolute",
        floor=0.7,
        expect="at least",
        paper_effect=None,
    )
    cost = replace(lower_ece, id="gp-cost-gpf-overhead", grid=COST, scale="absolute", paper_effect=0.16)
    counted = Measured("a CPU", estimate(1.0, 0.1), 2.0, 1.0, verdict="descriptive", descriptive=True)
    only_counted = Row(replace(cost, id="cpu-only"), None, (counted,), statistics.NOT_MEASURED, "")
    rows = [
        judged_row(lower_ece, -0.14, 0.03),
        judged_row(floor, 0.75, 0.01),
        judged_row(cost, 1.9, 0.1),
        only_counted,
    ]
    shown = panels(rows)
    assert list(shown) == [
        "relative effects",
        "inference cost (a GPU's timings)",
        "sanity checks (rankuq's own, not the papers')",
    ]
    labels = {title: [t.get_text() for t in axis.get_yticklabels()] for title, axis in shown.items()}
    assert labels["sanity checks (rankuq's own, not the papers')"] == ["fit-wikiqa-ap-floor"]
    assert labels["inference cost (a GPU's timings)"] == ["gp-cost-gpf-overhead"]  # not cpu-only
    sanity = shown["sanity checks (rankuq's own, not the papers')"]
    assert [line.get_xdata()[0] for line in sanity.lines if line.get_marker() == "o"] == pytest.approx([0.05])


def test_the_same_rows_give_the_same_png_bytes_and_legible_text(lower_ece, tmp_path):
    rows = [judged_row(lower_ece, -0.14, 0.03), untestable_row(replace(lower_ece, id="gated"), 0.58)]
    first, second = forest_plot(rows, tmp_path / "a.png"), forest_plot(rows, tmp_path / "b.png")
    assert first.read_bytes() == second.read_bytes()
    figure = forest_figure(rows)
    assert len(figure.legends) == 1 and not any(axis.get_legend() for axis in figure.axes)
    texts = [
        t for axis in figure.axes for t in [*axis.texts, *axis.get_yticklabels(), *axis.get_xticklabels()]
    ]
    assert min(t.get_fontsize() for t in [*texts, *figure.legends[0].get_texts()]) >= 7


def test_the_plot_draws_the_number_the_table_shows_for_every_row(run_of, values, lower_ece):
    """Each row's line is the table's number (``shown``): a judged claim's estimate, an untestable
    claim's pooled d where its conditions agree, and the conditions' range (a pale bar, no point) where
    they disagree in direction (mixed, or untestable); ``forest_data`` lists what is drawn."""
    from rankuq.bench.findings.plot import RANGE_WIDTH, forest_data
    from rankuq.bench.findings.render import _claims_table
    from rankuq.bench.findings.shown import shown

    def run(b_ensemble: float, bert_ap: float):
        records = {
            ("a", "bert", "ECE"): [values(0.10, 0.01, s) for s in range(3)],
            ("a", "ensemble", "ECE"): [values(0.05, 0.01, 10 + s) for s in range(3)],
            ("b", "bert", "ECE"): [values(0.10, 0.01, 20 + s) for s in range(3)],
            ("b", "ensemble", "ECE"): [values(b_ensemble, 0.01, 30 + s) for s in range(3)],
        }
        for c in "ab":
            records[(c, "bert", "AP")] = [values(bert_ap, 0.05, 40 + s) for s in range(3)]
            records[(c, "bm25", "AP")] = [values(0.60, 0.05, 50 + s) for s in range(3)]
            records[(c, "ensemble", "AP")] = [values(0.70, 0.05, 60 + s) for s in range(3)]
        return run_of(records)

    gated = replace(lower_ece, preconditions=("works_in_domain",))
    rows = judge_all(
        [
            assess(replace(gated, id="mixed"), [run(0.15, 0.8)]),
            assess(replace(gated, id="pooled"), [run(0.05, 0.8)]),
            assess(replace(gated, id="gated-range"), [run(0.15, 0.4)]),
            assess(replace(gated, id="gated-pooled"), [run(0.05, 0.4)]),
        ]
    )
    verdicts = [row.verdict for row in rows]
    assert verdicts == [statistics.MIXED, statistics.REPRODUCED, statistics.UNTESTABLE, statistics.UNTESTABLE]
    data = forest_data(rows).set_index("claim")
    assert data.drawn.tolist() == ["range", "estimate", "range", "estimate"]
    for row in rows:
        found, drawn = shown(row), data.loc[row.claim.id]
        assert (drawn.low, drawn.high) == pytest.approx((100 * found.low, 100 * found.high))
        assert (found.d is None and drawn.d != drawn.d) or drawn.d == pytest.approx(100 * found.d)
        text = _claims_table([row], "t")[-2]  # the table prints the same numbers (%, one decimal)
        shown_numbers = [found.low, found.high] if found.d is None else [found.d, found.low, found.high]
        assert all(f"{v:+.1%}" in text for v in shown_numbers)
    axis = panels(rows)["relative effects"]
    bars = [line for line in axis.lines if line.get_linewidth() == RANGE_WIDTH]
    drawn_bars = sorted(float(x) for bar in bars for x in bar.get_xdata())
    ranges = sorted(float(data.loc[c, end]) for c in ("mixed", "gated-range") for end in ("low", "high"))
    assert drawn_bars == pytest.approx(ranges)
    points = [line for line in axis.lines if line.get_marker() == "o"]
    assert sorted(p.get_xdata()[0] for p in points) == pytest.approx(sorted(data.d.dropna()))
