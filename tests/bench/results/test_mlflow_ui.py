"""MLflow's own UI (3.17), in headless Chromium at 1400 px against a real `mlflow server` serving a
real run's store: the page rankuq names opens on the cells as rows with calibration numbers in view,
where the experiment's bare address opens on the GenAI overview whatever the experiment's tags say."""

import re

import numpy as np
import pytest

from rankuq.bench.benchmarks.cluster.nodes import mlflow_server
from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.results.tracking import experiment_page, ui_command

from ...browser import chromium, text_of
from ..conftest import free_port

pytestmark = pytest.mark.slow  # the tiny grid's run, a server (50-90 s on a loaded machine), each page ~20 s
SIZE = (1400, 900)
# What the runs table shows at 1400 px, measured on the screenshot: MLflow's sidebar and its
# assistant panel leave the table 790 px, of which its fixed columns (checkbox, run name, created) take 413.
TABLE_PX = 790


def page(url: str, profile, shot=None) -> str:
    """The page's DOM once its scripts ran (virtual time: the React app's fetches and renders)."""
    args = ["--virtual-time-budget=30000", *([f"--screenshot={shot}"] if shot else ["--dump-dom"]), url]
    return chromium(*args, size=SIZE, profile=profile, timeout=300)


def test_the_page_rankuq_names_shows_each_cell_with_its_calibration_at_1400_px(finished, tmp_path):
    run_dir, board = finished
    served = ui_command(default_tracking_uri(run_dir))[2:]  # the command rankuq prints for a run's store
    with mlflow_server(tmp_path, free_port(), served) as uri:
        url = experiment_page(uri)
        assert url == f"{uri}/#/experiments/1/runs?workflowType=machine_learning&viewStateShareKey=rankuq"
        dom = page(url, tmp_path / "ours")
        page(url, tmp_path / "shot", tmp_path / "runs.png")  # for a person to look at when this fails
        bare = text_of(page(f"{uri}/#/experiments/1", tmp_path / "bare"))
    text = text_of(dom)
    # Each cell is a row of its own; the grid's MLflow run (which held them folded, "-" everywhere) is not.
    assert all(f"{method} × wikiqa" in text for method in board.method) and " tiny " not in f" {text} "
    # AP, ECE and R@1 hold the board's numbers and lie within the table's 790 px (R@1's numbers may be
    # cut at the edge).
    fixed = sum(
        int(w)
        for w in re.findall(
            r'col-id="(?:0|attributes.`Run Name`|runDateAndNestInfo)"[^>]*width: (\d+)px', dom
        )[:3]
    )
    for metric in ("AP", "ECE", "R_at_1"):
        left, width = map(
            int,
            re.search(rf'col-id="metrics.`{metric}`"[^>]*style="left: (\d+)px; width: (\d+)px', dom).groups(),
        )
        assert fixed + left + (width if metric != "R_at_1" else 0) <= TABLE_PX, (metric, fixed, left, width)
        cells = re.findall(
            rf'role="gridcell" col-id="metrics.`{metric}`".*?class="ag-cell-value">([^<]*)<', dom
        )
        shown = sorted(float(value) for value in cells if value not in ("", "-"))
        expected = sorted(board[metric.replace("_at_", "@")].dropna())
        assert len(expected) >= 2 and np.allclose(shown, expected, rtol=1e-9), (metric, shown, expected)
    assert "Run Name" not in bare and "Traces" in bare  # MLflow's default: the GenAI overview
