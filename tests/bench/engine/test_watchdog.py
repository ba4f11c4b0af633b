"""A SIGKILLed driver's local Ray stops with it (issue 32): the watchdog ``ray_session`` starts
stops the processes recorded in the run directory once the driver is gone. The driver is a real
local Ray session in a subprocess this test starts; only its pids are ever signalled."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

DRIVER = """
import sys, time
from pathlib import Path
import ray
from rankuq.bench.preflight.addresses import check_ray_address
from rankuq.bench.engine.session import ray_session
with ray_session(None, Path(sys.argv[1])):
    check_ray_address(ray.get_runtime_context().gcs_address)  # a real GCS passes the gRPC probe
    print("up", flush=True)
    time.sleep(600)
"""
GONE_WITHIN_S = 30  # the watchdog polls every 0.5 s; SIGTERM, then SIGKILL after 5 s


def _alive(recorded: dict[str, float]) -> list[int]:
    alive = []
    for pid, start in recorded.items():
        try:
            if abs(psutil.Process(int(pid)).create_time() - start) < 0.01:
                alive.append(int(pid))
        except psutil.Error:
            continue
    return alive


@pytest.mark.slow
def test_a_sigkilled_driver_s_ray_stops_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "ray-pids.json"
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(pid_file)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert driver.stdout is not None and driver.stdout.readline() == "up\n"
        recorded = json.loads(pid_file.read_text())
        assert len(_alive(recorded)) >= 3  # gcs_server, raylet, the agents at least
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=10)
        deadline = time.monotonic() + GONE_WITHIN_S
        while _alive(recorded) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _alive(recorded) == [], [psutil.Process(p).cmdline()[:1] for p in _alive(recorded)]
        assert not pid_file.exists()
    finally:
        if driver.poll() is None:
            driver.kill()
        for pid in _alive(json.loads(pid_file.read_text()) if pid_file.exists() else {}):
            os.kill(pid, signal.SIGKILL)  # this test's own Ray only (pid and start time recorded)
