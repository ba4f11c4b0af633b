"""The Ray session of a run: a local cluster sized to the machine or an existing one, started and
stopped with the run, with the processes it leaves recorded (``engine.processes``)."""

import contextlib
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import ray
import ray.train.torch

from rankuq.bench.engine.processes import record_children
from rankuq.bench.engine.signal_keeper import keep_handler, reassert
from rankuq.bench.engine.watchdog import start_watchdog
from rankuq.errors import RankuqError
from rankuq.gpu_env import worker_env_vars


@contextmanager
def ray_session(address: str | None = None, pid_file: Path | None = None) -> Iterator[None]:
    """Use the running Ray session, or start one (local, sized to the machine, or ``address``).

    A local Ray's processes are recorded in ``pid_file`` (``bench.engine.processes``: a rerun stops what a
    killed driver left); the caller's SIGTERM handler is kept (``ray.init`` installs its own)."""
    # Tune's new console output prints an experiment box and result paths even at verbose=0; the
    # grid draws its own progress bars (a user's own setting wins).
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    if ray.is_initialized():
        yield
        return
    on_sigterm = signal.getsignal(signal.SIGTERM)
    main_thread = threading.current_thread() is threading.main_thread()
    before = _descendants()
    try:
        _start_ray(address)
    except BaseException as stop:
        # Ctrl-C, or SIGTERM through the handler ray.init installs (sys.exit, so rc 15 and no word),
        # mid start-up: the processes it started would outlive the driver (ray::DashboardAgent did).
        ray.shutdown()
        _stop_children_but(before)
        if main_thread and callable(on_sigterm):
            signal.signal(signal.SIGTERM, on_sigterm)
            if isinstance(stop, SystemExit):
                on_sigterm(signal.SIGTERM, None)  # the caller's own handling of SIGTERM
        raise
    if callable(on_sigterm) and main_thread:
        signal.signal(signal.SIGTERM, on_sigterm)
    watchdog = None
    if pid_file is not None and address is None:
        record_children(pid_file)
        watchdog = start_watchdog(pid_file)  # stops them should this driver be killed
    ray.data.DataContext.get_current().enable_progress_bars = False  # the grid draws its own
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # "progress bars disabled", execution plans
    try:
        with keep_handler(signal.SIGTERM) if main_thread else contextlib.nullcontext():
            yield
    finally:
        ray.shutdown()
        reassert(signal.SIGTERM)  # Ray's logger, shut down with it, set SIGTERM to the default action
        if pid_file is not None:
            pid_file.unlink(missing_ok=True)  # the watchdog's sign to leave
        if watchdog is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(timeout=5)


def leave_ctrl_c_to_driver() -> None:
    """Keep Tune's SIGINT handler out: Ctrl-C stops the driver at once, and a rerun resumes from the
    cache, not from Tune's experiment state. Tune's handler stays installed after its experiment
    ends (it restores the old one only on a signal), so it would swallow the user's next Ctrl-C."""
    os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"


RAY_START_TRIES = 3  # Ray gives a local node a fixed 30 s to register; a loaded machine may need more


def _start_ray(address: str | None) -> None:
    """``ray.init``, tried again (after stopping what the try started) when the local node timed
    out during startup, as it does on a heavily loaded machine; one error line after the last try."""
    for _ in range(RAY_START_TRIES):
        started = _descendants()
        try:
            quiet = logging.ERROR
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=quiet,
                runtime_env=_runtime_env(),
            )
            return
        except ConnectionError as error:  # 'auto' with no cluster running, a head that went away
            reason = " ".join(str(error).split())
            raise RankuqError(f"--address {address}: {reason}; start the cluster or drop --address") from None
        except Exception as error:  # Ray raises a bare Exception for it
            if "timed out during startup" not in str(error):
                raise
            ray.shutdown()
            _stop_children_but(started)
    raise RankuqError(
        f"Ray's local node did not start within Ray's 30 s, {RAY_START_TRIES} times (load average "
        f"{os.getloadavg()[0]:.0f}); finished work is kept: run the same command again when the "
        "machine is less busy"
    )


def _runtime_env() -> dict[str, dict[str, str]] | None:
    """The job's runtime env: JAX and TensorFlow kept off the GPU in every worker of every node
    (``rankuq.gpu_env``; a local Ray's workers inherit this process's environment, a cluster's
    nodes were started by others); the user's own values where set."""
    env_vars = worker_env_vars()
    return {"env_vars": env_vars} if env_vars else None


def _descendants() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


def _stop_children_but(pids: set[int]) -> None:
    """Stop this process's descendants other than ``pids`` (what a failed ``ray.init`` started)."""
    new = [child for child in psutil.Process().children(recursive=True) if child.pid not in pids]
    for child in new:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(new, timeout=5)
