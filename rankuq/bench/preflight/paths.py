"""A command's input files and output folders, checked before the slow imports (Ray, torch, MLflow
take seconds) and before anything is written: an input is a regular file or an anonymous pipe (a
named pipe or device would block the read or never end), an output folder is a writable folder or can
become one."""

import os
import stat
import tempfile
from pathlib import Path

from rankuq.errors import RankuqError


def check_input_file(path: Path, option: str) -> None:
    """``path``, where it exists, is a regular file or an anonymous pipe (``--run /dev/stdin`` after
    ``|``, ``<(zcat run.gz)``: its writer came with it, so it opens at once and is read). A named pipe
    (mkfifo) would block the open until a writer comes, for ever with none; a device or socket may
    never end. Asks the file system only; opens nothing."""
    try:
        found = path.stat()
    except OSError:
        return  # absent or unreadable: the reader names it
    if stat.S_ISFIFO(found.st_mode) and found.st_dev == _pipe_device():
        return
    if not stat.S_ISREG(found.st_mode) and not stat.S_ISDIR(found.st_mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(found.st_mode) else "a device or socket"
        raise RankuqError(
            f"{option} {path}: {kind}, not a regular file (opening it may wait for ever); give the path "
            "of a regular file, or pipe it in: --run /dev/stdin, --run <(zcat run.gz)"
        )


def _pipe_device() -> int:
    """The device of anonymous pipes (Linux's pipefs): every ``os.pipe()`` has it, no named pipe does."""
    read, write = os.pipe()
    try:
        return os.fstat(read).st_dev
    finally:
        os.close(read)
        os.close(write)


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
