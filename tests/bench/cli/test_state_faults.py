"""State faults (issue 13.5-13.9) as the command meets them: endpoints that do not answer, files that
are not stores, a run directory in use, SIGTERM. The modules' own tests: a broken default store
(results/test_mlflow_store.py), the lock (rundir/test_lock.py), Ray processes a killed run left
(engine/test_processes.py, engine/test_session.py)."""

import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from rankuq.bench.cli import common as cli
from rankuq.bench.cli.main import main
from rankuq.bench.preflight import addresses, paths, tracking_inputs
from rankuq.bench.rundir.lock import HOLDER_FILE, run_dir_lock

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
    assert time.monotonic() - started < addresses.CONNECT_TIMEOUT_S + 2
    assert named in _one_line(capsys)
    assert not (tmp_path / "run").exists()


def _mlflow_like(path: Path, extra_table: str | None = None) -> None:
    with sqlite3.connect(path) as db:
        for table in (*tracking_inputs.MLFLOW_TABLES, *([extra_table] if extra_table else [])):
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
    assert not paths._read_only(tmp_path)
    monkeypatch.setattr(paths, "_read_only", lambda path: True)  # no read-only mount here to try
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


def test_sigterm_is_handled_as_ctrl_c(tmp_path, capsys, monkeypatch):
    def terminated(**_: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr("rankuq.bench.evaluation.blackbox.read_inputs", terminated)  # the CLI's first step
    before = signal.getsignal(signal.SIGTERM)
    assert main(["evaluate", "--predictions", str(tmp_path / "p.parquet")]) == cli.EXIT_TERMINATED == 143
    assert _one_line(capsys).startswith("rankuq: interrupted; finished work is kept, resume with: rankuq ")
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("drop", ["DELETE FROM alembic_version", "DROP TABLE alembic_version"])
def test_a_partly_created_store_is_one_line_for_the_leaderboard_and_left_as_it_is(tmp_path, capsys, drop):
    """A kill while MLflow makes a store's tables leaves them without a schema revision; MLflow would
    then try to make them again ("table ... already exists", a traceback)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    store = tmp_path / "store.db"
    SqlAlchemyStore(f"sqlite:///{store}", str(tmp_path / "artifacts")).engine.dispose()
    with sqlite3.connect(store) as db:
        db.execute(drop)
    db.close()
    before = store.read_bytes()
    capsys.readouterr()  # MLflow's lines while it made the store
    assert main(["leaderboard", "--tracking-uri", f"sqlite:///{store}"]) == 2
    error = _one_line(capsys)
    assert f"{store} is an MLflow store left partly created, with no schema revision" in error
    assert "move this one aside" in error or "a path that does not exist yet" in error
    assert store.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["store.db"]
