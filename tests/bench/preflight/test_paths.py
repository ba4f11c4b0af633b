"""A command's input files and output folders, checked before anything is written: each bad one is one
RankuqError of one line that names the option and what to do (the command's exit code:
tests/bench/cli); the checks open no input and leave no file behind."""

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from rankuq.bench.preflight.paths import check_input_file, check_output_folder
from rankuq.errors import RankuqError

from .conftest import one_error

NOBODY = 65534


def test_a_fifo_or_device_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)  # no writer: opening it to read would block for ever
    assert one_error(lambda: check_input_file(fifo, "--run")) == (
        f"--run {fifo}: a FIFO (named pipe), not a regular file (opening it may wait for ever); give the "
        "path of a regular file, or pipe it in: --run /dev/stdin, --run <(zcat run.gz)"
    )
    assert one_error(lambda: check_input_file(Path("/dev/zero"), "--qrels")).startswith(
        "--qrels /dev/zero: a device or socket, not a regular file"
    )
    check_input_file(tmp_path / "absent.txt", "--run")  # the reader names a missing file
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 0.5 t\n")
    check_input_file(tmp_path / "run.txt", "--run")


def test_an_output_folder_that_is_a_file_or_under_one_is_refused(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert one_error(lambda: check_output_folder(afile, "--out")) == (
        f"--out {afile} is a file, not a folder; give a folder path"
    )
    assert one_error(lambda: check_output_folder(afile / "run", "--run-dir")) == (
        f"--run-dir {afile / 'run'}: {afile} is a file, not a folder; give a folder path"
    )
    check_output_folder(tmp_path / "new" / "run", "--run-dir")  # its nearest existing parent: writable
    assert not (tmp_path / "new").exists()


def _as_nobody(check: Callable[[], None]) -> str:
    """``check``'s RankuqError message (or "") in a forked child running as user nobody: root may write
    into any folder, so a folder's permissions refuse only another user."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's exit handlers
        message = b"no error"
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            check()
        except RankuqError as error:
            message = str(error).encode()
        except BaseException as error:  # reported to the parent
            message = f"{type(error).__name__}: {error}".encode()
        finally:
            os.write(write, message)
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        answer_text = answer.read().decode()
    os.waitpid(pid, 0)
    return answer_text


def test_an_output_folder_in_a_folder_nobody_may_write_is_refused():
    # Under /tmp, not pytest's tmp_path: its folders are root's alone, user nobody could not look in.
    parent = Path(tempfile.mkdtemp(prefix="rankuq-test-"))
    try:
        parent.chmod(0o755)
        locked = parent / "locked"
        locked.mkdir(mode=0o555)
        target = locked / "run"
        expected = f"--run-dir {target}: {locked} is not writable (read-only file system or permissions)"
        if os.geteuid() == 0:
            assert _as_nobody(lambda: check_output_folder(target, "--run-dir")) == expected
        else:
            assert one_error(lambda: check_output_folder(target, "--run-dir")) == expected
        assert not target.exists()
    finally:
        shutil.rmtree(parent)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_that_takes_no_file_is_refused_though_permissions_allow(tmp_path):
    """Root passes os.access on /proc, which takes no new file: the check makes (and removes) one."""
    message = one_error(lambda: check_output_folder(Path("/proc/run"), "--run-dir"))
    if os.geteuid() == 0:
        assert message == (
            "--run-dir /proc/run: /proc is not writable (a test file could not be made there: No such file "
            "or directory); give a folder on a writable file system"
        )
    else:
        assert message.startswith("--run-dir /proc/run: /proc is not writable")
    check_output_folder(tmp_path / "run", "--run-dir")
    assert not list(tmp_path.iterdir())  # the test file is gone
