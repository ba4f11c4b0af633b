"""The run-directory lock: one `rankuq run` per run directory, named when held, free again when its holder
dies."""

import json
import os
import re
import socket
import subprocess
import sys

import pytest
from filelock import FileLock

from rankuq.bench.rundir.lock import HOLDER_FILE, LOCK_FILE, run_dir_lock
from rankuq.errors import RankuqError


def test_the_lock_of_a_killed_run_is_free_again(tmp_path):
    code = (
        "import sys, time; from pathlib import Path; from rankuq.bench.rundir.lock import run_dir_lock\n"
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


def test_the_holder_is_recorded_while_held_and_removed_after(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["/venv/bin/rankuq", "run", "grid.yaml", "--run-dir", "my run"])
    run_dir = tmp_path / "new" / "run"  # made by the lock
    with run_dir_lock(run_dir):
        holder = json.loads((run_dir / HOLDER_FILE).read_text())
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        # none given: the process's command line, as a shell reads it
        assert holder["command"] == "/venv/bin/rankuq run grid.yaml --run-dir 'my run'"
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", holder["since"])
    assert sorted(path.name for path in run_dir.iterdir()) == [LOCK_FILE]


def test_the_holder_given_is_what_a_refusal_names(tmp_path, monkeypatch):
    """A notebook's process is the kernel (``python -m ipykernel_launcher -f kernel.json``): the API
    says what it is, and that is what a second run is told."""
    monkeypatch.setattr(sys, "argv", ["ipykernel_launcher.py", "-f", "kernel.json"])
    api = "rankuq.run_grid, the Python API"
    with run_dir_lock(tmp_path, api):
        assert json.loads((tmp_path / HOLDER_FILE).read_text())["command"] == api
        with pytest.raises(RankuqError, match=rf"\({api}\); wait for"), run_dir_lock(tmp_path):
            pass


def test_a_holder_not_recorded_yet_is_named_as_starting_up(tmp_path):
    other = FileLock(tmp_path / LOCK_FILE)  # another run took the lock, its record not written yet
    other.acquire(timeout=0)
    try:
        with pytest.raises(RankuqError, match=r"in use by another rankuq run \(starting up\); wait"):
            run_dir_lock(tmp_path).__enter__()
        (tmp_path / HOLDER_FILE).write_text('{"pid": 7')  # cut short
        with pytest.raises(RankuqError, match=r"in use by another rankuq run \(starting up\)"):
            run_dir_lock(tmp_path).__enter__()
        assert (tmp_path / HOLDER_FILE).read_text() == '{"pid": 7'  # the holder's, left as it is
    finally:
        other.release()
    with run_dir_lock(tmp_path):
        pass
