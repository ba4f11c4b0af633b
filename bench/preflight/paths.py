"""A command's input files and output folders, checked before the slow imports (Ray, torch, MLflow
take seconds) and before anything is written: an input is a regular file (a FIFO or device would
block the read or never end), an output folder is a writable folder or can become one."""

import os
import stat
import tempfile
from pathlib import Path

from rankuq.errors import RankuqError


def check_input_file(path: Path, option: str) -> None:
    """``path``, where it exists, is a regular file: a FIFO, socket or device would block the read
    (a FIFO with no writer for ever) or never end. Asks the file system only; opens nothing."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # absent or unreadable: the reader names it
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device or socket"
        raise RankuqError(
            f"{option} {path}: {kind}, not a regular file (opening it may wait for ever); it must be a "
            "regular file: give the path of one"
        )


def check_output_folder(path: Path, what: str) -> None:
    """``path`` is a folder or can become one: not a file, and its nearest existing parent is writable,
    as a file made and removed there shows (root passes every permission check, yet /proc takes no
    file)."""
    if path.exists() and not path.is_dir():
        raise RankuqError(f"{what} {path} is a file, not a folder; give a folder path")
    existing = next(parent for parent in (path, *path.absolute().parents) if parent.exists())
    if not existing.is_dir():
        raise RankuqError(f"{what} {path}: {existing} is a file, not a folder; give a folder path")
    if not os.access(existing, os.W_OK | os.X_OK) or _read_only(existing):
        raise RankuqError(f"{what} {path}: {existing} is not writable (read-only file system or permissions)")
    try:
        with tempfile.TemporaryFile(dir=existing, prefix=".rankuq-probe-"):
            pass
    except OSError as error:
        raise RankuqError(
            f"{what} {path}: {existing} is not writable (a test file could not be made there: "
            f"{error.strerror or error}); give a folder on a writable file system"
        ) from None


def check_output_file(path: Path, what: str, example: str) -> None:
    """``path`` can be written as a file: not a folder, and its folder passes ``check_output_folder``."""
    if path.is_dir():
        raise RankuqError(f"{what} {path} is a folder; give a file path such as {example}")
    check_output_folder(path.parent, what)


def _read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
