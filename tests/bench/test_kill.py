"""SIGKILL of the `rankuq run` driver at many points of a tiny grid (the MLflow store's creation
included), then a rerun: the same leaderboard as an undisturbed run, one MLflow run per grid, cell
and seed, and no process of the killed session alive 10 s after the rerun ends (issue 13, bar 2).

Long: ``RANKUQ_KILL_POINTS`` (default 20) runs of the grid, each killed and rerun. Run it under
``flock /tmp/rankuq-ray.lock`` (it starts local Ray sessions).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from rankuq.bench.tracking import Tracker, default_tracking_uri

GRID = {
    "name": "kill",
    "tasks": ["wikiqa"],
    "methods": {"bm25": {}, "bert": {}},
    "seeds": [0],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"epochs": 1, "max_queries": 60},
    "eval": {"probes": ["calibration"], "dev_split": None},
    "resources": {"max_concurrent_trials": 1},
}
MLFLOW_RUNS = 1 + 2 + 2  # the grid, a cell per method, a seed run per cell
POINTS = int(os.environ.get("RANKUQ_KILL_POINTS", "20"))
STORE_POINTS = (0.0, 0.1, 0.3)  # seconds after the store's file appears

# The CLI as a user runs it (its Ray session records its processes in the run directory).
DRIVER = """
import sys
from rankuq.bench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _start(grid: Path, run_dir: Path) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    argv = [sys.executable, "-c", DRIVER, "run", str(grid), "--run-dir", str(run_dir)]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _session(driver: subprocess.Popen) -> set[psutil.Process]:
    try:
        return set(psutil.Process(driver.pid).children(recursive=True))
    except psutil.Error:
        return set()


def _alive(processes: set[psutil.Process]) -> list[str]:
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{process.pid} {process.name()}")
        except psutil.Error:
            continue  # gone meanwhile
    return alive


def _finish(grid: Path, run_dir: Path) -> float:
    started = time.monotonic()
    driver = _start(grid, run_dir)
    _, err = driver.communicate(timeout=1200)
    assert driver.returncode == 0, err[-3000:]
    return time.monotonic() - started


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, float]:
    folder = tmp_path_factory.mktemp("kill")
    grid = folder / "grid.yaml"
    grid.write_text(yaml.safe_dump(GRID))
    run_dir = folder / "undisturbed"
    return grid, run_dir, _finish(grid, run_dir)


def _kill_points() -> list[tuple[str, float]]:
    return [("store", s) for s in STORE_POINTS] + [("fraction", (i + 0.5) / POINTS) for i in range(POINTS)]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "at"), _kill_points(), ids=[f"{k}-{a:.3f}" for k, a in _kill_points()])
def test_a_sigkilled_run_resumes_to_the_same_leaderboard(reference, tmp_path, kind, at):
    grid, undisturbed, duration = reference
    run_dir = tmp_path / "run"
    driver = _start(grid, run_dir)
    session: set[psutil.Process] = set()
    deadline = time.monotonic() + (duration * at if kind == "fraction" else 600)
    while time.monotonic() < deadline and driver.poll() is None:
        session |= _session(driver)
        store = (run_dir / "mlflow.db").exists() or list(run_dir.glob(".mlflow.db.tmp-*"))
        if kind == "store" and store:
            time.sleep(at)
            break
        time.sleep(0.02)
    session |= _session(driver)
    driver.send_signal(signal.SIGKILL)
    driver.wait()

    _finish(grid, run_dir)
    assert (run_dir / "leaderboard.csv").read_text() == (undisturbed / "leaderboard.csv").read_text()
    keys = Tracker(default_tracking_uri(run_dir)).run_keys()
    assert len(keys) == len(set(keys)) == MLFLOW_RUNS
    time.sleep(10)
    assert not _alive(session)
