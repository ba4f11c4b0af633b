"""The run-directory lock: one ``rankuq run`` per run directory at a time."""

import json
import os
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from rankuq.atomic import atomic_write
from rankuq.errors import RankuqError

LOCK_FILE = ".rankuq.lock"  # held (flock) while a `rankuq run` uses the run directory
HOLDER_FILE = ".rankuq.lock.json"  # who holds it: the lock file itself is truncated by each opener


@contextmanager
def run_dir_lock(run_dir: Path, holder: str | None = None) -> Iterator[None]:
    """Hold the run directory for one `rankuq run`: a second run on it fails at once, naming the
    holder (``holder``: who runs it, such as the command line or the API call; None: this process's
    command line), and leaves everything of the first untouched. The OS drops the lock when its
    holder dies, so a killed run never blocks the next."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(run_dir / LOCK_FILE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RankuqError(
            f"run directory {run_dir} is in use by {_holder(run_dir / HOLDER_FILE)}; wait for that run "
            "to end, or give another --run-dir"
        ) from None
    try:
        held = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": holder or shlex.join(sys.argv),  # a notebook: python -m ipykernel_launcher …
        }
        atomic_write(run_dir / HOLDER_FILE, json.dumps(held))
        yield
    finally:
        (run_dir / HOLDER_FILE).unlink(missing_ok=True)
        lock.release()


def _holder(path: Path) -> str:
    try:
        holder = json.loads(path.read_text())
        return f"pid {holder['pid']} on {holder['host']} since {holder['since']} ({holder['command']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another rankuq run (starting up)"
