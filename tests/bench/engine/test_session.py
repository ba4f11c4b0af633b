"""The Ray session of a run: its local processes recorded, a local Ray that times out while starting
started again."""

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from rankuq.bench.engine.processes import stop_recorded
from rankuq.errors import RankuqError

DRIVER = """
import sys, time
from pathlib import Path
from rankuq.bench.engine.session import ray_session
with ray_session(pid_file=Path(sys.argv[1])):
    import ray
    ray.get(ray.remote(lambda: 1).remote())
    print("up", flush=True)
    time.sleep(600)
"""


@pytest.mark.slow
def test_ray_processes_of_a_sigkilled_driver_are_stopped_by_the_rerun(tmp_path):
    """Real local Ray: the driver is SIGKILLed, its Ray processes are recorded and the rerun's
    ``stop_recorded`` leaves none of them alive. Run it under ``flock /tmp/rankuq-ray.lock``."""
    pid_file = tmp_path / "ray-pids.json"
    env = {**os.environ, "RAY_ADDRESS": ""}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(pid_file)], stdout=subprocess.PIPE, env=env)
    try:
        assert driver.stdout.readline().strip() == b"up"
        recorded = {int(pid) for pid in json.loads(pid_file.read_text())}
        assert len(recorded) >= 3  # gcs_server, raylet, and the agents raylet starts
    finally:
        driver.kill()
        driver.wait()
    stop_recorded(pid_file)
    time.sleep(1)
    alive = [pid for pid in recorded if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
    assert not alive


def _ray_init_timing_out(times: int) -> tuple[list[int], object]:
    calls: list[int] = []

    def init(**_: object) -> None:
        calls.append(1)
        if len(calls) <= times:
            raise Exception("The current node timed out during startup. This could happen because ...")

    return calls, init


def test_a_local_ray_that_times_out_during_startup_is_started_again(monkeypatch):
    from rankuq.bench.engine import session as engine

    calls, init = _ray_init_timing_out(engine.RAY_START_TRIES - 1)
    monkeypatch.setattr(engine.ray, "init", init)
    engine._start_ray(None)
    assert len(calls) == engine.RAY_START_TRIES


def test_a_local_ray_that_never_starts_is_one_error_line(monkeypatch):
    from rankuq.bench.engine import session as engine

    calls, init = _ray_init_timing_out(engine.RAY_START_TRIES)
    monkeypatch.setattr(engine.ray, "init", init)
    with pytest.raises(RankuqError, match=r"did not start within Ray.s 30 s, 3 times .* run the same"):
        engine._start_ray(None)
    assert len(calls) == engine.RAY_START_TRIES


def test_rays_workers_get_the_gpu_safe_environment_and_the_users_values(monkeypatch):
    """Every worker Ray starts for the run, on every node, keeps JAX and TensorFlow off the GPU
    (rankuq.gpu_env); a value the user set reaches the workers as set."""
    from rankuq.bench.engine import session as engine
    from rankuq.gpu_env import GPU_SAFE_ENV

    given: dict[str, object] = {}
    monkeypatch.setattr(engine.ray, "init", lambda **kwargs: given.update(kwargs))
    monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    monkeypatch.setenv("JAX_PLATFORMS", "cuda")
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    engine._start_ray("auto")
    assert given["runtime_env"] == {"env_vars": {**GPU_SAFE_ENV, "JAX_PLATFORMS": "cuda"}}


WORKER_ENV = """
import json, os
import rankuq
from rankuq.bench.engine.session import ray_session
from rankuq.gpu_env import GPU_SAFE_ENV
with ray_session():
    import ray
    read = ray.remote(num_cpus=0.1)(lambda: {name: os.environ.get(name) for name in GPU_SAFE_ENV})
    print(json.dumps(ray.get(read.remote())))
"""


@pytest.mark.slow
def test_a_real_ray_worker_sees_the_gpu_safe_environment_and_the_users_value():
    """Real local Ray, as `rankuq run` starts it: a task reads the variables in its worker."""
    from rankuq.gpu_env import GPU_SAFE_ENV

    env = {name: value for name, value in os.environ.items() if name not in GPU_SAFE_ENV}
    env |= {"RAY_ADDRESS": "", "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
    done = subprocess.run(
        [sys.executable, "-c", WORKER_ENV], env=env, capture_output=True, text=True, timeout=300, check=True
    )
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {**GPU_SAFE_ENV, "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}


SIGTERM_AFTER_RAY = """
import os, signal, time
from rankuq.bench.engine.session import ray_session
handled = []
signal.signal(signal.SIGTERM, lambda *_: handled.append(True))
with ray_session():
    pass
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(0.2)
print("handled" if handled else "missed")
"""


@pytest.mark.slow  # a real local Ray started and stopped (~20 s)
def test_the_drivers_sigterm_handler_holds_after_ray_shut_down():
    """Ray's logger sets SIGTERM to the default action as ray.shutdown stops it, behind Python's back:
    a SIGTERM during the probes that run after scoring's Ray killed `rankuq run` with no line (rc 143,
    issue 48). After ray_session the handler Python holds runs."""
    env = {**os.environ, "RAY_ADDRESS": ""}
    done = subprocess.run(
        [sys.executable, "-c", SIGTERM_AFTER_RAY], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "handled"
