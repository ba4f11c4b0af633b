"""The entry point of `rankuq`: the installed console script, one-line errors, exit codes for
Ctrl-C and SIGTERM (the verbs: test_run.py, test_evaluate.py, test_leaderboard.py, ...)."""

import shlex
import signal
import subprocess
import sys
from pathlib import Path

from rankuq.bench.cli.common import EXIT_INTERRUPTED, EXIT_USAGE
from rankuq.bench.cli.main import main


def test_the_installed_console_script_runs():
    script = Path(sys.executable).with_name("rankuq")
    done = subprocess.run([str(script), "tasks"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "wikiqa" in done.stdout


def test_ctrl_c_exits_130_with_the_command_to_resume_and_restores_sigterm(tmp_path, capsys, monkeypatch):
    def interrupted(**_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("rankuq.bench.evaluation.blackbox.read_inputs", interrupted)  # the verb's first step
    before = signal.getsignal(signal.SIGTERM)
    argv = ["evaluate", "--predictions", str(tmp_path / "my run.parquet")]
    assert main(argv) == EXIT_INTERRUPTED == 130
    err = capsys.readouterr().err
    assert err == f"rankuq: interrupted; finished work is kept, resume with: rankuq {shlex.join(argv)}\n"
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_error_of_the_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["evaluate", "--predictions", str(tmp_path / "absent.parquet")]) == EXIT_USAGE == 2
    err = capsys.readouterr().err
    assert err.startswith("rankuq: error: ") and err.count("\n") == 1 and "absent.parquet" in err


def test_a_full_disk_or_a_read_only_folder_is_one_line_naming_the_file(tmp_path, capsys, monkeypatch):
    """Issue 48: a full disk under the run directory (evaluate, leaderboard --out) was a traceback."""
    import errno
    import os

    from rankuq.bench.cli import main as cli_main

    target = tmp_path / "board.tex"
    for code, fix in ((errno.ENOSPC, "free space there"), (errno.EROFS, "write elsewhere")):

        def refused(args, code=code):
            raise OSError(code, os.strerror(code), str(target))

        monkeypatch.setattr(cli_main, "leaderboard_command", refused)
        assert main(["leaderboard", str(tmp_path)]) == EXIT_USAGE
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith(f"rankuq: error: {target}: {os.strerror(code)}; {fix}")


def test_another_os_error_is_not_hidden(tmp_path, monkeypatch):
    import errno

    import pytest

    from rankuq.bench.cli import main as cli_main

    def broken(args):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(cli_main, "leaderboard_command", broken)
    with pytest.raises(OSError, match="Input/output error"):
        main(["leaderboard", str(tmp_path)])
