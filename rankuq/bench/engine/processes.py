"""The local Ray processes of a run, recorded by pid so that a rerun can stop what a killed driver
left behind (Ray's agents outlive a SIGKILLed driver and ignore SIGTERM for minutes).

Processes are found by the pids recorded in the run directory, each checked against its recorded
start time (a pid reused by another program is left alone), never by name.
"""

import contextlib
import json
import logging
import os
from pathlib import Path

import psutil

from rankuq.atomic import atomic_write

STOP_TIMEOUT_S = 5.0

logger = logging.getLogger(__name__)


def record_children(pid_file: Path) -> None:
    """Record every descendant of this process (Ray's head processes, started just before) with
    its start time, so ``stop_recorded`` finds exactly them."""
    children = psutil.Process().children(recursive=True)
    atomic_write(pid_file, json.dumps({str(p.pid): p.create_time() for p in children if p.is_running()}))


def stop_recorded(pid_file: Path) -> int:
    """Stop the recorded processes that still run (SIGTERM, then SIGKILL after ``STOP_TIMEOUT_S``),
    remove the record, and return how many were stopped; one warning line when there were any."""
    if not pid_file.exists():
        return 0
    try:
        recorded = {int(pid): float(start) for pid, start in json.loads(pid_file.read_text()).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        recorded = {}  # a record cut short by a kill: nothing to trust in it
    alive = []
    for pid, start in recorded.items():
        try:
            process = psutil.Process(pid)
            if abs(process.create_time() - start) < 0.01 and pid != os.getpid():
                alive.append(process)
        except psutil.Error:
            continue
    for process in alive:
        _signal(process, terminate=True)
    _, survivors = psutil.wait_procs(alive, timeout=STOP_TIMEOUT_S)
    for process in survivors:
        _signal(process, terminate=False)
    psutil.wait_procs(survivors, timeout=STOP_TIMEOUT_S)
    pid_file.unlink(missing_ok=True)
    if alive:
        logger.warning(
            "%s: stopped %d Ray processes a killed run of this run directory left", pid_file, len(alive)
        )
    return len(alive)


def _signal(process: psutil.Process, terminate: bool) -> None:
    with contextlib.suppress(psutil.Error):  # already gone
        process.terminate() if terminate else process.kill()
