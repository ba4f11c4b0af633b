"""Writes that never leave a half-written file or folder: a temporary name, then a rename. In the
base layer, so the task caches (rankuq/tasks/), the run directory and the reports (rankuq/bench/) share
one."""

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rankuq.errors import RankuqError


def atomic_write(path: Path, text: str) -> None:
    """Readers see the old file or the whole new one, never a part."""
    with staged_file(path) as staging:
        staging.write_text(text)


@contextmanager
def staged_file(path: Path, shared: bool = False) -> Iterator[Path]:
    """A temporary name beside ``path`` to write to, renamed to ``path`` when the block ends
    without an error, removed when it fails. ``shared``: writers in other processes may write the
    same file at once (a cache), so each stages under a name of its own."""
    unique = f"-{os.getpid()}-{time.time_ns()}" if shared else ""
    staging = path.with_name(f".{path.name}.tmp{unique}")
    try:
        yield staging
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)


@contextmanager
def staged_folder(target: Path, shared: bool = False) -> Iterator[Path]:
    """An empty folder beside ``target`` to write into, renamed to ``target`` when the block ends
    without an error, removed when it fails (what a killed writer leaves is cleared by the next
    attempt). ``shared``: other processes may build the same folder at once (a cache of the same
    inputs), so each stages under a name of its own and the first to publish wins."""
    unique = f"-{os.getpid()}-{time.time_ns()}" if shared else ""
    staging = target.with_name(f".{target.name}.tmp{unique}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
        try:
            os.replace(staging, target)
        except OSError:
            if not (shared and target.is_dir()):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # nothing left once renamed


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
