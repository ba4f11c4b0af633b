import base64
import json
import re

import numpy as np
import pytest
from PIL import Image

from rankuq.bench.plots import PLOT_WIDTH_PX
from rankuq.bench.results.boards import read_run_dir
from rankuq.bench.results.report import kind_title, render_report, write_report
from rankuq.errors import RankuqError

from ...browser import chromium


def test_the_report_is_self_contained_with_every_plot_embedded(run_dir):
    board = read_run_dir(run_dir)
    html = render_report(board)
    sources = re.findall(r'<img src="data:image/png;base64,([^"]+)"', html)
    assert sorted(base64.b64decode(s) for s in sources) == sorted(p.path.read_bytes() for p in board.plots)
    overview = re.findall(r'<img class="overview" src="data:image/png;base64,([^"]+)"', html)
    assert len(overview) == 1 and base64.b64decode(overview[0]).startswith(b"\x89PNG")
    assert html.count("<img") == len(board.plots) + 1 == 9 and 'data-images="9"' in html
    assert not re.search(r"(src|href)=\"(?!data:)", html) and "<link" not in html


def test_the_report_groups_plots_by_condition_then_kind_with_captions(run_dir):
    html = render_report(read_run_dir(run_dir))
    headings = re.findall(r"<h[23]>([^<]+)</h[23]>", html)
    kinds = ["Reliability diagram", "Risk-aversion curve", "Performance–abstention curve (nDCG@10)"]
    assert headings == ["wikiqa", *kinds, "clariq-to-wikiqa", *kinds]
    assert "<figcaption>Reliability diagram: bert, clariq-to-wikiqa</figcaption>" in html
    assert '<td><strong>0.440 ± 0.020</strong> <span class="note">(+10.00% †)</span></td>' in html
    assert '<td>0.380 ± 0.000 <span class="note">(-5.00%)</span></td>' in html


def test_kind_titles():
    assert kind_title("abstention_nDCG_at_10") == "Performance–abstention curve (nDCG@10)"
    assert kind_title("reliability") == "Reliability diagram"
    assert kind_title("reliability_ERCE") == "Reliability ERCE"


def test_a_plot_that_is_no_image_writes_nothing(run_dir, tmp_path):
    index = run_dir / "plots" / "index.json"
    entries = json.loads(index.read_text())
    (run_dir / "plots" / "notes.txt").write_text("not a plot")
    index.write_text(json.dumps([*entries, {**entries[0], "path": "notes.txt"}]))
    out = tmp_path / "out"
    with pytest.raises(RankuqError, match=r"notes.txt: a plot must be a PNG file"):
        write_report(read_run_dir(run_dir), out)
    assert not out.exists()


def test_the_report_renders_in_headless_chromium_with_every_plot(run_dir, tmp_path):
    board = read_run_dir(run_dir)
    _, html = write_report(board, tmp_path / "out")
    url = html.resolve().as_uri()
    dom = chromium("--dump-dom", url)
    assert (
        f'data-images-loaded="{len(board.plots) + 1}"' in dom
    )  # and the overview  # set by the page once all images decoded
    shot = tmp_path / "screenshot.png"
    chromium(f"--screenshot={shot}", url)
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3).astype(int)
    assert len(np.unique(pixels, axis=0)) > 50  # not a blank page
    # The plots' lines (matplotlib's first colour, #1f77b4) are on screen.
    assert (np.abs(pixels - [31, 119, 180]).sum(axis=1) < 30).sum() > 500


def test_tables_scroll_inside_the_page_instead_of_widening_it(run_dir):
    html = render_report(read_run_dir(run_dir))
    assert html.count('<div class="scroll"><table>') == 2 and ".scroll { overflow-x: auto;" in html


def test_the_overview_at_full_width_and_each_plot_at_its_own_size(run_dir, tmp_path):
    html = render_report(read_run_dir(run_dir))
    measure = (  # the widths the browser lays the images out at (within their borders), once decoded
        "<script>addEventListener('load', () => document.body.dataset.widths = "
        "[...document.querySelectorAll('img')].map(i => i.clientWidth).join(' '))"
        "</script></body>"
    )
    page = tmp_path / "report.html"
    page.write_text(html.replace("</body>", measure))
    dom = chromium("--dump-dom", page.resolve().as_uri())
    overview, *plots = map(float, re.search(r'data-widths="([\d. ]+)"', dom).group(1).split())
    assert overview >= 900  # was 380 px: the figure rule of the small plots
    # Each plot (bench.plots', as the fixture's) at its PNG's width: was 380 px, its legend unreadable.
    assert plots == [PLOT_WIDTH_PX] * len(read_run_dir(run_dir).plots)
