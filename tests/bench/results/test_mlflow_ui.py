"""MLflow's own UI (3.17), in headless Chromium against a real `mlflow server`: the page rankuq names
opens on the runs table with the board's metric columns and rankuq as the runs' source, where the
experiment's bare address opens on the GenAI overview whatever the experiment's tags say."""

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from rankuq.bench.benchmarks.cluster.nodes import mlflow_server
from rankuq.bench.results.leaderboard import metrics_of
from rankuq.bench.results.tracking import Tracker, experiment_page

from ..conftest import free_port, log_grid

INSTALL = "apt-get update && apt-get install -y --no-install-recommends chromium"

pytestmark = pytest.mark.slow  # the server starts in 50-90 s on a loaded machine; each page in about 20 s


def page_text(url: str, profile: Path) -> str:
    """The page's visible text after its scripts ran, at a width that shows every selected column."""
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail(f"chromium is not installed: run `{INSTALL}` (with sudo if not root)", pytrace=False)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1920,1080"]
    run = subprocess.run(
        [binary, *flags, f"--user-data-dir={profile}", "--virtual-time-budget=20000", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    dom = re.sub(r"<(style|script)[^>]*>.*?</\1>", " ", run.stdout, flags=re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", dom).split())


def test_the_experiment_page_opens_on_the_runs_table_with_the_headline_metrics(run_dir, tmp_path):
    (tmp_path / "server").mkdir()
    with mlflow_server(tmp_path / "server", free_port()) as uri:
        tracker = Tracker(uri)
        log_grid(tracker, run_dir, "my-grid")
        tracker.show_columns(metrics_of(pd.read_csv(run_dir / "leaderboard.csv")))  # as track does
        url = experiment_page(uri)
        assert url == f"{uri}/#/experiments/1/runs?workflowType=machine_learning&viewStateShareKey=rankuq"
        ours = page_text(url, tmp_path / "ours")
        bare = page_text(f"{uri}/#/experiments/1", tmp_path / "bare")
    header = ours[ours.index("Run Name") :]
    # The runs table: its header with the board's metrics (as MLflow names them), then the grid run.
    assert re.search(r"Run Name Created Metrics .*Source .*ECE R_at_1 nAUC_AP_u_max .*my-grid", header)
    assert "rankuq" in header[header.index("my-grid") :]  # the Source column
    assert "Run Name" not in bare and "Traces" in bare  # MLflow's default: the GenAI overview
