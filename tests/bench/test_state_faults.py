"""State faults (issue 13.5-13.9): endpoints that do not answer, files that are not stores, a run
directory in use, SIGTERM, a store left half-migrated or corrupt, Ray processes a killed run left."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from rankuq.bench import cli, preflight
from rankuq.bench.cli import main
from rankuq.bench.files import HOLDER_FILE, run_dir_lock
from rankuq.bench.leftovers import record_children, stop_recorded
from rankuq.errors import RankuqError

GRID = "tasks: [wikiqa]\nmethods: {bm25: {}}\n"


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    return err


def _grid(tmp_path: Path) -> str:
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    return str(path)


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (
            ["--address", "127.0.0.1:1"],
            "--address 127.0.0.1:1: 127.0.0.1:1 did not accept a connection within 5 s",
        ),
        (["--address", "127.0.0.1:notaport"], "--address 127.0.0.1:notaport: not host:port"),
        (
            ["--tracking-uri", "http://127.0.0.1:9"],
            "--tracking-uri http://127.0.0.1:9: 127.0.0.1:9 did not accept",
        ),
        (["--tracking-uri", "sqlite://x.db"], "tracking URI sqlite://x.db: a SQLite store is sqlite:///"),
    ],
)
def test_endpoints_that_do_not_answer_fail_fast_with_one_line(tmp_path, capsys, flags, named):
    started = time.monotonic()
    assert main(["run", _grid(tmp_path), "--run-dir", str(tmp_path / "run"), *flags]) == 2
    assert time.monotonic() - started < preflight.CONNECT_TIMEOUT_S + 2
    assert named in _one_line(capsys)
    assert not (tmp_path / "run").exists()


def _mlflow_like(path: Path, extra_table: str | None = None) -> None:
    with sqlite3.connect(path) as db:
        for table in (*preflight.MLFLOW_TABLES, *([extra_table] if extra_table else [])):
            db.execute(f"CREATE TABLE {table} (version_num)")
    db.close()


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda p: p.write_bytes(b""), "is empty (0 bytes)"),
        (lambda p: p.write_text("hello\n"), "is not a SQLite file (6 bytes)"),
        (
            lambda p: sqlite3.connect(p).execute("CREATE TABLE notes (x)").connection.commit(),
            "without MLflow",
        ),
        (lambda p: _mlflow_like(p, "_alembic_tmp_trace_tags"), "half-migrated"),
        (lambda p: p.mkdir(), "is not a file"),
    ],
    ids=["0-byte file", "text file", "other SQLite", "half-migrated store", "a folder"],
)
def test_a_tracking_uri_file_that_is_no_store_is_refused_and_left_as_it_is(tmp_path, capsys, make, named):
    store = tmp_path / "store.db"
    make(store)
    before = (store.stat().st_size, store.stat().st_mtime_ns)
    argv = [
        "run",
        _grid(tmp_path),
        "--run-dir",
        str(tmp_path / "run"),
        "--tracking-uri",
        f"sqlite:///{store}",
    ]
    assert main(argv) == 2
    assert named in _one_line(capsys)
    assert (store.stat().st_size, store.stat().st_mtime_ns) == before
    assert main(["leaderboard", "--tracking-uri", f"sqlite:///{store}", "--out", str(tmp_path / "o")]) == 2
    assert named in _one_line(capsys)
    assert (store.stat().st_size, store.stat().st_mtime_ns) == before and not (tmp_path / "o").exists()


def test_a_run_dir_or_out_that_is_a_file_or_read_only_is_one_line(tmp_path, capsys, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["run", _grid(tmp_path), "--run-dir", str(afile)]) == 2
    assert f"--run-dir {afile} is a file, not a folder" in _one_line(capsys)
    assert main(["run", _grid(tmp_path), "--run-dir", str(afile / "sub")]) == 2
    assert f"{afile} is a file, not a folder" in _one_line(capsys)
    assert not preflight._read_only(tmp_path)
    monkeypatch.setattr(preflight, "_read_only", lambda path: True)  # no read-only mount here to try
    assert main(["run", _grid(tmp_path), "--run-dir", str(tmp_path / "new" / "run")]) == 2
    assert f"{tmp_path} is not writable (read-only file system" in _one_line(capsys)
    assert not (tmp_path / "new").exists() and afile.read_text() == "x"


def test_a_second_run_on_a_held_run_dir_exits_2_at_once_naming_the_holder(tmp_path, capsys):
    run_dir = tmp_path / "run"
    with run_dir_lock(run_dir):
        first = sorted(path.name for path in run_dir.iterdir())
        holder = (run_dir / HOLDER_FILE).read_text()
        started = time.monotonic()
        assert main(["run", _grid(tmp_path), "--run-dir", str(run_dir)]) == 2
        assert time.monotonic() - started < 5
        err = _one_line(capsys)
        assert f"run directory {run_dir} is in use by pid {os.getpid()} on " in err
        assert sorted(path.name for path in run_dir.iterdir()) == first
        assert (run_dir / HOLDER_FILE).read_text() == holder
    assert not (run_dir / HOLDER_FILE).exists()
    with run_dir_lock(run_dir):  # released: the next run takes it
        pass


def test_the_lock_of_a_killed_run_is_free_again(tmp_path):
    code = (
        "import sys, time; from pathlib import Path; from rankuq.bench.files import run_dir_lock\n"
        "with run_dir_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(RankuqError, match=f"in use by pid {holder.pid} on "), run_dir_lock(tmp_path):
        pass
    holder.kill()
    holder.wait()
    with run_dir_lock(tmp_path):  # the OS dropped the dead holder's lock
        pass


def test_sigterm_is_handled_as_ctrl_c(tmp_path, capsys, monkeypatch):
    def terminated(**_: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr("rankuq.bench.evaluate.read_inputs", terminated)  # the CLI's first step
    before = signal.getsignal(signal.SIGTERM)
    assert main(["evaluate", "--predictions", str(tmp_path / "p.parquet")]) == cli.EXIT_TERMINATED == 143
    assert _one_line(capsys).startswith("rankuq: interrupted; finished work is kept, resume with: rankuq ")
    assert signal.getsignal(signal.SIGTERM) is before


# --- the default store of a run directory -----------------------------------------------------


def test_a_new_store_appears_only_whole_and_a_broken_own_store_is_rebuilt(tmp_path, caplog):
    from rankuq.bench.tracking import Tracker, prepare_store

    store = tmp_path / "mlflow.db"
    uri = f"sqlite:///{store}"
    (tmp_path / ".mlflow.db.tmp-1-2").write_bytes(b"what a killed creation left")
    prepare_store(uri, owned=True)
    assert preflight.store_problem(store) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db"]
    assert Tracker(uri).experiment_id  # MLflow reads and writes it
    assert not [r for r in caplog.records if r.levelname == "WARNING"]

    broken = [
        lambda: _mlflow_like(_fresh(store), "_alembic_tmp_trace_tags"),
        lambda: store.write_bytes(store.read_bytes()[:5000]),
        lambda: (
            sqlite3.connect(store)
            .execute("UPDATE alembic_version SET version_num = 'abc'")
            .connection.commit()
        ),
    ]
    for number, damage in enumerate(broken, start=1):
        damage()
        prepare_store(uri, owned=True)
        assert preflight.store_problem(store) is None
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert len(warnings) == number and warnings[-1].startswith(f"{store} ")
        assert "a new store is made" in warnings[-1]
        time.sleep(1.1)  # the moved-aside name carries the second
    assert len(list(tmp_path.glob("mlflow.db.broken-*"))) == len(broken)


def test_someone_elses_broken_store_is_refused_untouched(tmp_path):
    from rankuq.bench.tracking import prepare_store

    store = tmp_path / "theirs.db"
    _mlflow_like(store)
    with sqlite3.connect(store) as db:
        db.execute("INSERT INTO alembic_version VALUES ('0123')")
    db.close()
    before = store.read_bytes()
    with pytest.raises(RankuqError, match=r"theirs.db has MLflow schema revision \['0123'\]"):
        prepare_store(f"sqlite:///{store}", owned=False)
    assert store.read_bytes() == before and sorted(tmp_path.iterdir()) == [store]


def _fresh(path: Path) -> Path:
    path.unlink()
    return path


# --- Ray processes a killed run left ------------------------------------------------------------

STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print(1, flush=True); time.sleep(120)"
)


def test_a_rerun_stops_the_recorded_processes_and_nothing_else(tmp_path, caplog):
    stubborn = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE)
    polite = subprocess.Popen([sys.executable, "-c", "import time; print(1, flush=True); time.sleep(120)"])
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        stubborn.stdout.readline()
        pid_file = tmp_path / "ray-pids.json"
        record_children(pid_file)
        recorded = json.loads(pid_file.read_text())
        ours = {str(stubborn.pid), str(polite.pid), str(bystander.pid)}
        assert ours <= set(recorded)
        # Only this test's processes: the suite's own Ray session is a child of pytest too.
        recorded = {pid: start for pid, start in recorded.items() if pid in ours}
        # The bystander's pid was "reused": another start time, so it is not ours to stop.
        recorded[str(bystander.pid)] -= 100
        pid_file.write_text(json.dumps(recorded))
        assert stop_recorded(pid_file) == len(recorded) - 1
        # psutil reaped them (Popen sees no status): the one that ignores SIGTERM is gone too (SIGKILL).
        assert stubborn.wait(10) is not None and polite.wait(10) is not None
        assert not psutil.pid_exists(stubborn.pid) and not psutil.pid_exists(polite.pid)
        assert bystander.poll() is None and not pid_file.exists()
        (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert "stopped 2 Ray processes a killed run of this run directory left" in warning
        assert stop_recorded(pid_file) == 0
    finally:
        for process in (stubborn, polite, bystander):
            process.kill()
            process.wait()


DRIVER = """
import sys, time
from pathlib import Path
from rankuq.bench.engine import ray_session
with ray_session(pid_file=Path(sys.argv[1])):
    import ray
    ray.get(ray.remote(lambda: 1).remote())
    print("up", flush=True)
    time.sleep(600)
"""


@pytest.mark.slow
def test_ray_processes_of_a_sigkilled_driver_are_stopped_by_the_rerun(tmp_path):
    """Real local Ray: the driver is SIGKILLed, its Ray processes are recorded and the rerun's
    ``stop_recorded`` leaves none of them alive. Run it under ``flock /tmp/rankuq-ray.lock``."""
    pid_file = tmp_path / "ray-pids.json"
    env = {**os.environ, "RAY_ADDRESS": ""}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(pid_file)], stdout=subprocess.PIPE, env=env)
    try:
        assert driver.stdout.readline().strip() == b"up"
        recorded = {int(pid) for pid in json.loads(pid_file.read_text())}
        assert len(recorded) >= 3  # gcs_server, raylet, and the agents raylet starts
    finally:
        driver.kill()
        driver.wait()
    stop_recorded(pid_file)
    time.sleep(1)
    alive = [pid for pid in recorded if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
    assert not alive


def _ray_init_timing_out(times: int) -> tuple[list[int], object]:
    calls: list[int] = []

    def init(**_: object) -> None:
        calls.append(1)
        if len(calls) <= times:
            raise Exception("The current node timed out during startup. This could happen because ...")

    return calls, init


def test_a_local_ray_that_times_out_during_startup_is_started_again(monkeypatch):
    from rankuq.bench import engine

    calls, init = _ray_init_timing_out(engine.RAY_START_TRIES - 1)
    monkeypatch.setattr(engine.ray, "init", init)
    engine._start_ray(None)
    assert len(calls) == engine.RAY_START_TRIES


def test_a_local_ray_that_never_starts_is_one_error_line(monkeypatch):
    from rankuq.bench import engine

    calls, init = _ray_init_timing_out(engine.RAY_START_TRIES)
    monkeypatch.setattr(engine.ray, "init", init)
    with pytest.raises(RankuqError, match=r"did not start within Ray.s 30 s, 3 times .* run the same"):
        engine._start_ray(None)
    assert len(calls) == engine.RAY_START_TRIES
