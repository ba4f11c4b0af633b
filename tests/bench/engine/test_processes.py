"""The Ray processes a run records by pid and start time, and what a rerun stops of them."""

import json
import os
import subprocess
import sys

import psutil

from rankuq.bench.engine.processes import record_children, stop_recorded

STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print(1, flush=True); time.sleep(120)"
)


def test_a_rerun_stops_the_recorded_processes_and_nothing_else(tmp_path, caplog):
    stubborn = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE)
    polite = subprocess.Popen([sys.executable, "-c", "import time; print(1, flush=True); time.sleep(120)"])
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        stubborn.stdout.readline()
        pid_file = tmp_path / "ray-pids.json"
        record_children(pid_file)
        recorded = json.loads(pid_file.read_text())
        ours = {str(stubborn.pid), str(polite.pid), str(bystander.pid)}
        assert ours <= set(recorded)
        # Only this test's processes: the suite's own Ray session is a child of pytest too.
        recorded = {pid: start for pid, start in recorded.items() if pid in ours}
        # The bystander's pid was "reused": another start time, so it is not ours to stop.
        recorded[str(bystander.pid)] -= 100
        pid_file.write_text(json.dumps(recorded))
        assert stop_recorded(pid_file) == len(recorded) - 1
        # psutil reaped them (Popen sees no status): the one that ignores SIGTERM is gone too (SIGKILL).
        assert stubborn.wait(10) is not None and polite.wait(10) is not None
        assert not psutil.pid_exists(stubborn.pid) and not psutil.pid_exists(polite.pid)
        assert bystander.poll() is None and not pid_file.exists()
        (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert "stopped 2 Ray processes a killed run of this run directory left" in warning
        assert stop_recorded(pid_file) == 0
    finally:
        for process in (stubborn, polite, bystander):
            process.kill()
            process.wait()


def test_a_recorded_sleep_is_found_by_pid_and_start_time_and_stopped(tmp_path):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        pid_file = tmp_path / "ray-pids.json"
        record_children(pid_file)
        recorded = json.loads(pid_file.read_text())
        assert recorded[str(sleeper.pid)] == psutil.Process(sleeper.pid).create_time()
        # Only the sleep: the suite's own Ray session is a child of pytest too.
        pid_file.write_text(json.dumps({str(sleeper.pid): recorded[str(sleeper.pid)]}))
        assert stop_recorded(pid_file) == 1
        sleeper.wait(5)  # psutil reaped it already
        assert not psutil.pid_exists(sleeper.pid)
        assert not pid_file.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_record_cut_short_by_a_kill_stops_nothing_and_is_removed(tmp_path):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        pid_file = tmp_path / "ray-pids.json"
        pid_file.write_text(f'{{"{sleeper.pid}": {psutil.Process(sleeper.pid).create_time()}')  # no }
        assert stop_recorded(pid_file) == 0 and not pid_file.exists()
        assert sleeper.poll() is None
        pid_file.write_text(json.dumps({str(os.getpid()): psutil.Process().create_time()}))
        assert stop_recorded(pid_file) == 0  # never this process itself
    finally:
        sleeper.kill()
        sleeper.wait()
