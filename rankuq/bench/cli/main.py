"""The entry point of ``rankuq``: dispatch, one-line errors and exit codes, Ctrl-C and SIGTERM."""

import argparse
import errno
import os
import signal
import sys
import threading
from collections.abc import Callable

from rankuq.bench.cli.common import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Terminated,
    command_line,
    on_sigterm,
)
from rankuq.bench.cli.compare import compare_command
from rankuq.bench.cli.evaluate import evaluate_command
from rankuq.bench.cli.findings import findings_command
from rankuq.bench.cli.leaderboard import leaderboard_command
from rankuq.bench.cli.listing import list_methods, list_metrics, list_probes, list_tasks
from rankuq.bench.cli.parser import build_parser
from rankuq.bench.cli.run import run_command
from rankuq.errors import RankuqError, interruption


def main(argv: list[str] | None = None) -> int:
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if in_main_thread else None
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    args.command_line = command_line(argv)  # what the run-directory lock names as holding it
    actions: dict[str, Callable[[argparse.Namespace], None]] = {
        "run": run_command,
        "evaluate": evaluate_command,
        "compare": compare_command,
        "leaderboard": leaderboard_command,
        "findings": findings_command,
        "tasks": list_tasks,
        "methods": list_methods,
        "probes": list_probes,
        "metrics": list_metrics,
    }
    try:
        actions[args.command](args)
    except RankuqError as error:
        print(f"rankuq: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        if error.errno not in STORAGE_ERRORS:
            raise
        print(f"rankuq: error: {storage_error(error)}", file=sys.stderr)
        return EXIT_USAGE
    except BaseException as error:
        stop = interruption(error)
        if stop is None:
            raise
        return interrupted(stop, argv)
    return 0


# The machine's storage refusing a write: a full disk, a read-only mount, a quota. Said in one line
# naming the file, not as a traceback; what was written before stays (every write is atomic).
STORAGE_ERRORS = {errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM}


def storage_error(error: OSError) -> str:
    """One line for a write the storage refused: the file, the reason, what to do."""
    where = error.filename or "a file"
    fix = {
        errno.ENOSPC: "free space there or write elsewhere (--run-dir, --out)",
        errno.EDQUOT: "free space there or write elsewhere (--run-dir, --out)",
        errno.EROFS: "write elsewhere (--run-dir, --out, --tracking-uri)",
    }.get(error.errno or 0, "give a folder you may write to")
    return f"{where}: {error.strerror or error}; {fix}"


def interrupted(stop: KeyboardInterrupt, argv: list[str] | None) -> int:
    """Say how to resume, in one line; the shell's code for the signal."""
    print(f"rankuq: interrupted; finished work is kept, resume with: {command_line(argv)}", file=sys.stderr)
    return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


def cli() -> None:
    """Console entry point. A reader that closes the pipe early (``rankuq leaderboard … | head``)
    ends the command quietly, with the shell's code for SIGPIPE, as other tools do."""
    try:
        code = main()
        sys.stdout.flush()  # a closed pipe fails here, not in the interpreter's exit, which would print it
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is still buffered goes nowhere
        code = EXIT_BROKEN_PIPE
    # The interpreter's exit still runs MLflow's and Ray's atexit callbacks (seconds): a signal there
    # would print "Exception ignored in atexit callback" and its traceback. It ends the exit instead.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop_exiting)
    sys.exit(code)


def _stop_exiting(signum: int, frame: object) -> None:
    stop = Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()
    code = interrupted(stop, None)
    sys.stderr.flush()
    os._exit(code)  # the callbacks left are exit-time cleanup; none keeps finished work
