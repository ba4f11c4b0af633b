"""A process beside the driver that stops the driver's local Ray when the driver dies without its
``ray.shutdown`` (SIGKILL, OOM kill): Ray's DashboardAgent and RuntimeEnvAgent are re-parented to
pid 1 and would live on until the next run of the same run directory stops them.

``python -m rankuq.bench.engine.watchdog DRIVER_PID DRIVER_START PID_FILE``: polls the driver (its
pid and start time); once it is gone, stops the processes ``PID_FILE`` records
(``engine.processes.stop_recorded``). Exits without stopping anything when the record is removed
(the driver's ``ray_session`` ended normally)."""

import subprocess
import sys
import time
from pathlib import Path

import psutil

from rankuq.bench.engine.processes import stop_recorded

POLL_S = 0.5


def start_watchdog(pid_file: Path) -> subprocess.Popen[bytes]:
    """The watchdog of this process's recorded Ray, in its own session (a signal to the driver's
    process group does not reach it)."""
    me = psutil.Process()
    argv = [
        sys.executable,
        "-m",
        "rankuq.bench.engine.watchdog",
        str(me.pid),
        repr(me.create_time()),
        str(pid_file),
    ]
    return subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL)


def _alive(pid: int, start: float) -> bool:
    try:
        return abs(psutil.Process(pid).create_time() - start) < 0.01
    except psutil.Error:
        return False


def main(argv: list[str]) -> int:
    pid, start, pid_file = int(argv[0]), float(argv[1]), Path(argv[2])
    while pid_file.exists():
        if not _alive(pid, start):
            stop_recorded(pid_file)
            return 0
        time.sleep(POLL_S)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
