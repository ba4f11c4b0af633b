"""Resume and fault tolerance through real Ray and MLflow: a Train worker or a member's own Tune trial
killed mid-training, a driver stopped by Ctrl-C, and a rerun of a finished grid, each against an
undisturbed run of the same grid."""

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Collection
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from rankuq.bench.benchmarks.grid_rerun import SCALE_GRID, measure
from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.results.tracking import Tracker
from rankuq.bench.run.grid_run import GridRequest, grid_run
from rankuq.bench.rundir.compute_log import read_log
from rankuq.bench.rundir.layout import TRAINING_FILE
from rankuq.methods.base import WEIGHTS_FILE

# Two members (ensemble member 0 is bert's model) trained one after the other on every answered
# WikiQA training question: epochs of seconds, so a kill after the first checkpoint lands mid-training.
GRID = {
    "name": "resume",
    "tasks": ["wikiqa"],
    "methods": {"bert": {}, "ensemble": {"M": 2}},
    "seeds": [0],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"epochs": 3},
    "eval": {"probes": ["calibration"], "dev_split": None},  # the least scoring and probing
    "resources": {"max_concurrent_trials": 1},
}
MLFLOW_RUNS = 1 + 2 + 2  # the grid, a cell per method, a seed run per cell
SNAPSHOT = "checkpoint_manager_snapshot.json"  # Ray Train writes it once a reported checkpoint is stored


def run(run_dir: Path) -> None:
    grid_run(GridRequest(GRID, run_dir, source="resume grid"))


def mlflow_keys(run_dir: Path) -> list[str]:
    return Tracker(default_tracking_uri(run_dir)).mlflow_run_keys()


@pytest.fixture(scope="module")
def undisturbed(ray_session, tmp_path_factory) -> tuple[Path, float]:
    run_dir = tmp_path_factory.mktemp("undisturbed")
    start = time.perf_counter()
    run(run_dir)
    return run_dir, time.perf_counter() - start


def predictions(run_dir: Path) -> dict[str, pa.Table]:
    files = sorted(run_dir.glob("predictions/**/*.parquet"))
    assert len(files) == 2  # one per method
    return {str(path.relative_to(run_dir)): pq.read_table(path) for path in files}


def assert_same_numbers(run_dir: Path, reference: Path) -> None:
    ours, theirs = predictions(run_dir), predictions(reference)
    assert ours.keys() == theirs.keys()  # same content keys: same members, same settings
    for name, table in ours.items():
        assert table.equals(theirs[name]), name


def first_checkpoint(storage: Path, after: Collection[Path] = (), timeout: float = 300) -> Path:
    """The Train run folder whose first checkpoint Ray Train stores next (not one of ``after``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = {path.parent for path in storage.glob(f"*/{SNAPSHOT}")} - set(after)
        if found:
            return found.pop()
        time.sleep(0.05)
    raise TimeoutError(f"no Train checkpoint under {storage} in {timeout} s")


def ray_processes(actor: str) -> list[psutil.Process]:
    """Processes of this test's own Ray session (they descend from ours) that run ``actor``: Ray titles
    a worker "ray::<actor class>.<method>" (RayTrainWorker; a Tune function trainable's ImplicitFunc)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            title = process.cmdline()
            if title and title[0].startswith(f"ray::{actor}"):
                found.append(process)
    return found


def training_records(run_dir: Path) -> dict[str, dict]:
    files = (run_dir / "models").glob(f"*/{TRAINING_FILE}")
    return {path.parent.name: json.loads(path.read_text()) for path in files}


@pytest.mark.slow  # real Ray grids killed and rerun (~6 min): pytest -m slow
def test_a_killed_train_worker_resumes_from_its_checkpoint_with_the_same_numbers(undisturbed, tmp_path):
    reference, _ = undisturbed
    killed: list[int] = []

    def kill_after_first_checkpoint() -> None:
        first_checkpoint(tmp_path / "ray")
        (worker,) = ray_processes("RayTrainWorker")  # one trial at a time: the worker of that member
        worker.send_signal(signal.SIGKILL)
        killed.append(worker.pid)

    killer = threading.Thread(target=kill_after_first_checkpoint, daemon=True)
    killer.start()
    run(tmp_path)
    killer.join(timeout=1)
    assert len(killed) == 1 and not psutil.pid_exists(killed[0])
    starts = sorted(record["start_epoch"] for record in training_records(tmp_path).values())
    assert starts[0] == 0 and starts[1] >= 1  # the restarted worker went on from a checkpoint
    assert_same_numbers(tmp_path, reference)
    keys = mlflow_keys(tmp_path)
    assert len(keys) == len(set(keys)) == MLFLOW_RUNS


@pytest.mark.slow  # real Ray grids killed and rerun (~6 min): pytest -m slow
def test_a_killed_trial_that_trains_its_member_resumes_from_its_epoch_checkpoint(undisturbed, tmp_path):
    reference, _ = undisturbed
    killed: list[int] = []

    def kill_after_first_checkpoint() -> None:
        deadline = time.monotonic() + 300
        while not any((tmp_path / "ray").glob("*/epoch-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        (trial,) = ray_processes("ImplicitFunc")  # one trial at a time: the one training that member
        trial.send_signal(signal.SIGKILL)
        killed.append(trial.pid)

    killer = threading.Thread(target=kill_after_first_checkpoint, daemon=True)
    killer.start()
    grid = {**GRID, "resources": {**GRID["resources"], "trainer": "trial"}}
    grid_run(GridRequest(grid, tmp_path, source="resume grid"))
    killer.join(timeout=1)
    assert len(killed) == 1 and not psutil.pid_exists(killed[0])
    starts = sorted(record["start_epoch"] for record in training_records(tmp_path).values())
    assert starts[0] == 0 and starts[1] >= 1  # the retried trial went on from its checkpoint
    assert_same_numbers(tmp_path, reference)  # and trained what a Ray Train worker trains
    keys = mlflow_keys(tmp_path)
    assert len(keys) == len(set(keys)) == MLFLOW_RUNS


@pytest.mark.slow  # real Ray grids killed and rerun (~6 min): pytest -m slow
def test_a_driver_stopped_by_ctrl_c_resumes_where_it_stopped(undisturbed, tmp_path):
    reference, _ = undisturbed
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(yaml.safe_dump(GRID))
    run_dir = tmp_path / "run"
    command = ["run", str(grid_file), "--run-dir", str(run_dir)]
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:  # a file, not a pipe nobody reads while it runs
        driver = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import sys; from rankuq.bench.cli.main import main; sys.exit(main({command!r}))",
            ],
            stderr=stderr,
        )
    # Stop it once the first member is saved and the second has stored a checkpoint.
    first = first_checkpoint(run_dir / "ray")
    second = first_checkpoint(run_dir / "ray", after={first})
    driver.send_signal(signal.SIGINT)
    assert driver.wait(timeout=120) == 130
    assert log.read_text().strip().splitlines()[-1].endswith(f"resume with: rankuq {' '.join(command)}")
    assert (run_dir / "models" / first.name).exists() and not (run_dir / "models" / second.name).exists()
    saved = (run_dir / "models" / first.name / WEIGHTS_FILE).stat().st_mtime_ns

    run(run_dir)
    records = training_records(run_dir)
    assert (run_dir / "models" / first.name / WEIGHTS_FILE).stat().st_mtime_ns == saved  # not trained again
    assert records[second.name]["start_epoch"] >= 1  # resumed, not started over
    assert not (run_dir / "ray" / second.name).exists()  # its checkpoints go once the model is saved
    assert_same_numbers(run_dir, reference)
    keys = mlflow_keys(run_dir)
    assert len(keys) == len(set(keys)) == MLFLOW_RUNS
    log = read_log(run_dir)  # both invocations' time is counted, the stopped one said to be
    assert log is not None and [item["outcome"] for item in log["invocations"]] == ["interrupted", "finished"]
    assert all(item["wall_s"] > 0 for item in log["invocations"])
    first, second = log["invocations"]
    assert (first["members"], first["members_cached"], second["members_cached"]) == (2, 0, 1)


@pytest.mark.slow  # real Ray grids killed and rerun (~6 min): pytest -m slow
def test_a_rerun_of_a_finished_grid_takes_under_a_tenth_of_the_time_and_adds_no_mlflow_runs(undisturbed):
    run_dir, first = undisturbed
    before = mlflow_keys(run_dir)
    start = time.perf_counter()
    run(run_dir)
    assert time.perf_counter() - start < 0.1 * first
    assert sorted(mlflow_keys(run_dir)) == sorted(before) and len(before) == MLFLOW_RUNS


@pytest.mark.slow
def test_the_scale_grid_reruns_in_under_a_tenth_of_its_first_run_with_no_new_mlflow_runs(tmp_path):
    first, rerun = measure(SCALE_GRID, tmp_path / "run")  # `rankuq run` twice, in fresh processes
    assert rerun.seconds < 0.1 * first.seconds
    assert rerun.mlflow_runs == first.mlflow_runs == 1 + 4 * 4 + 4 * 4 * 2  # grid, cells, seeds
