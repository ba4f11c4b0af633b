"""Writes that readers see whole or not at all: a killed run leaves no half-written file or folder."""

import json
import os
import shlex
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from rankuq.errors import RankuqError

LOCK_FILE = ".rankuq.lock"  # held (flock) while a `rankuq run` uses the run directory
HOLDER_FILE = ".rankuq.lock.json"  # who holds it: the lock file itself is truncated by each opener


def atomic_write(path: Path, text: str) -> None:
    """Readers see the old file or the whole new one, never a part."""
    staging = path.with_name(f".{path.name}.tmp")
    try:
        staging.write_text(text)
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)


@contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """An empty folder beside ``target`` to write into, renamed to ``target`` when the block ends
    without an error; what a killed writer leaves is cleared by the next attempt."""
    staging = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    yield staging
    os.replace(staging, target)


@contextmanager
def removed_on_error(*folders: Path) -> Iterator[None]:
    """Remove each folder of ``folders`` that the block creates (with the missing parents it makes)
    when the block fails on bad input (a RankuqError): bad input leaves nothing behind. A folder
    that existed before is never touched."""
    created = [_outermost_missing(folder) for folder in folders]
    try:
        yield
    except RankuqError:
        for folder in created:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        raise


def _outermost_missing(path: Path) -> Path | None:
    """The outermost folder on the way to ``path`` (``path`` included) that does not exist yet."""
    missing = None
    for folder in (path.absolute(), *path.absolute().parents):
        if folder.exists():
            return missing
        missing = folder
    return missing


@contextmanager
def run_dir_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run directory for one `rankuq run`: a second run on it fails at once, naming the
    holder, and leaves everything of the first untouched. The OS drops the lock when its holder
    dies, so a killed run never blocks the next."""
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
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": shlex.join(["rankuq", *sys.argv[1:]]),
        }
        atomic_write(run_dir / HOLDER_FILE, json.dumps(holder))
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
