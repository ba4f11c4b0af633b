"""The findings' forest plot (bench.findings.plot): one row per judged claim, a panel per scale."""

import struct

import pytest

from rankuq.bench.findings import statistics
from rankuq.bench.findings.plot import forest_plot
from rankuq.bench.findings.rows import Row
from rankuq.bench.findings.verdicts import assess, judge_all


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return struct.unpack(">II", data[16:24])


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
    from dataclasses import replace

    unjudged = [replace(judged[0], overall=None, verdict=statistics.NOT_MEASURED)]
    assert png_size(forest_plot(unjudged, tmp_path / "none.png"))[0] > 0
