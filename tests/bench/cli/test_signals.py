"""Ctrl-C and SIGTERM at the moments where they once ended in tracebacks or left processes behind:
a real `rankuq` process, the signal sent at a moment found from its output or its processes. Every
moment ends as any other: the shell's code (130, 143) and one line saying how to resume."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

from rankuq.bench.cli.common import EXIT_INTERRUPTED, EXIT_TERMINATED

from ..conftest import TINY_GRID

RESUME = "rankuq: interrupted; finished work is kept, resume with: rankuq"
CODES = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}
SIGNALS = pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])


def start(code: str, log: Path) -> subprocess.Popen:
    """``code`` in a fresh Python in a session of its own (its processes, and only they, are ours)."""
    with log.open("w") as stderr:  # a file, not a pipe nobody reads while it runs
        return subprocess.Popen([sys.executable, "-c", code], stderr=stderr, start_new_session=True)


def wait_for(check, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout:.0f} s")
        time.sleep(0.02)


def assert_one_line(process: subprocess.Popen, log: Path, signum: signal.Signals) -> None:
    assert process.wait(timeout=180) == CODES[signum]
    text = log.read_text()
    assert "Traceback" not in text and "Exception ignored" not in text, text[-3000:]
    assert text.strip().splitlines()[-1].startswith(RESUME), text[-3000:]


@contextlib.contextmanager
def ours(process: subprocess.Popen):
    """Whatever the test leaves of the process group it started is stopped (its own, none other)."""
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def rankuq(argv: list[str]) -> str:
    return f"import sys; from rankuq.bench.cli.main import cli; sys.argv = ['rankuq', *{argv!r}]; cli()"


# Ctrl-C here is slow (11 s, a store of its own): the quick suite's Ctrl-C case is the interpreter's exit
@pytest.mark.parametrize(
    "signum", [pytest.param(signal.SIGINT, marks=pytest.mark.slow), signal.SIGTERM], ids=["ctrl-c", "sigterm"]
)
def test_a_signal_while_mlflow_creates_its_tables(signum, tmp_path):
    """Was: rc 1 with KeyboardInterrupt and SQLAlchemy's PendingRollbackError tracebacks."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({**TINY_GRID, "methods": {"bm25": {}}, "baseline": "bm25", "seeds": [0]}))
    log = tmp_path / "stderr.txt"
    driver = start(rankuq(["run", str(grid), "--run-dir", str(tmp_path / "run")]), log)
    with ours(driver):
        # bench.results.mlflow_store makes the store under a temporary name, then renames it (a poll
        # that misses those seconds signals just after them: any moment must end the same way).
        run = tmp_path / "run"
        wait_for(lambda: any(run.glob(".mlflow.db.tmp-*")) or (run / "mlflow.db").exists(), "MLflow store")
        driver.send_signal(signum)
        assert_one_line(driver, log, signum)


@SIGNALS
def test_a_signal_while_the_interpreter_exits(signum, tmp_path):
    """Was: "Exception ignored in atexit callback" and a traceback (MLflow's and Ray's exit-time work
    stands in for a callback here that takes its time)."""
    say = "print('exiting', file=sys.stderr, flush=True)"
    slow_exit = f"import atexit, time; atexit.register(lambda: ({say}, time.sleep(60)))"
    log = tmp_path / "stderr.txt"
    process = start(rankuq(["tasks"]).replace("cli()", f"{slow_exit}; cli()"), log)
    with ours(process):
        wait_for(lambda: "exiting" in log.read_text(), "exit", timeout=120)
        process.send_signal(signum)
        assert_one_line(process, log, signum)


@pytest.mark.slow  # Ray's start-up: 10-60 s
@pytest.mark.parametrize(
    ("signum", "group"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGTERM, True)],
    ids=["ctrl-c", "sigterm", "sigterm-to-the-group"],
)
def test_a_signal_during_rays_start_up_leaves_no_ray_process(signum, group, tmp_path):
    """Was: SIGTERM gave rc 15 and nothing printed (ray.init's own handler), or to the group (as a
    scheduler or a terminal sends it, Ray's processes too) a C++ stack dump and rc 134; Ctrl-C left a
    ray::DashboardAgent running."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump({**TINY_GRID, "methods": {"bert": {}}, "seeds": [0]}))
    log = tmp_path / "stderr.txt"
    driver = start(rankuq(["run", str(grid), "--run-dir", str(tmp_path / "run")]), log)
    seen: dict[int, psutil.Process] = {}

    def raylet_started() -> bool:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(driver.pid).children(recursive=True):
                seen.setdefault(child.pid, child)
        return any("raylet" in process.name() for process in seen.values() if process.is_running())

    with ours(driver):
        wait_for(raylet_started, "raylet")
        assert not (tmp_path / "run" / "ray-pids.json").exists()  # ray.init has not returned yet
        if group:  # the driver leads its group (start_new_session): it and Ray's processes
            os.killpg(driver.pid, signum)
        else:
            driver.send_signal(signum)
        assert_one_line(driver, log, signum)
        _, alive = psutil.wait_procs(list(seen.values()), timeout=60)
        assert not alive, [process.cmdline()[:2] for process in alive]
