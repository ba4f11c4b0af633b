"""The compute a run directory took, kept beside its results (``compute.json``): a grid resumed over
several invocations of ``rankuq run`` adds each one's wall time, machine and outcome, so the findings'
scale table can say what a run cost on which machine. Cached work costs nothing again: a rerun of a
finished grid adds its few seconds."""

import json
import os
import platform
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from rankuq.atomic import atomic_write
from rankuq.errors import RankuqError, interruption

COMPUTE_FILE = "compute.json"
FINISHED, INTERRUPTED, FAILED = "finished", "interrupted", "failed"


def cpu_name() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what ``platform`` knows."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    names = (line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name"))
    return next(names, "") or platform.processor() or platform.machine() or "unknown CPU"


def read_log(root: Path) -> dict[str, Any] | None:
    """The run directory's compute log, or None where it has none; a broken one is an error."""
    path = root / COMPUTE_FILE
    if not path.is_file():
        return None
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise RankuqError(f"{path}: not JSON ({error}); delete it to start its count again") from None
    if not isinstance(log, dict) or not isinstance(log.get("invocations"), list):
        raise RankuqError(f"{path}: no 'invocations' list; delete it to start its count again")
    return log


def add_invocation(root: Path, invocation: dict[str, Any]) -> dict[str, Any]:
    """The log with ``invocation`` appended and its total wall time updated, written whole."""
    log = read_log(root) or {"invocations": []}
    log["invocations"].append(invocation)
    log["wall_s"] = round(sum(float(item["wall_s"]) for item in log["invocations"]), 1)
    atomic_write(root / COMPUTE_FILE, json.dumps(log, indent=1) + "\n")
    return log


class Start(NamedTuple):
    """When an invocation began: a monotonic clock for its length, the wall clock for the record."""

    clock: float
    at: datetime


def start() -> Start:
    return Start(time.monotonic(), datetime.now(UTC))


@contextmanager
def timed_invocation(
    root: Path,
    began: Start,
    gpus: int = 0,
    address: str | None = None,
    facts: Mapping[str, int] | None = None,
) -> Iterator[None]:
    """Add the invocation that ``began`` (its work on the run directory ``root``) to the log when the
    block ends, whether it finished, was interrupted (Ctrl-C, SIGTERM) or failed; nothing is written
    where the block removed ``root``. Enter it once the input is known good (the lists built): bad
    input leaves a user's run directory as it was. ``gpus``: the GPUs the driver's machine lent it;
    ``address``: the Ray cluster it ran on (None: a local Ray on this machine); ``facts``: kept in the
    record (``members``, ``members_cached``: the grid's members and those already trained as it began)."""
    outcome = FAILED
    try:
        yield
        outcome = FINISHED
    except BaseException as error:
        if interruption(error) is not None or isinstance(error, SystemExit):
            outcome = INTERRUPTED
        raise
    finally:
        if root.is_dir():
            add_invocation(
                root,
                {
                    "started": began.at.isoformat(timespec="seconds"),
                    "wall_s": round(time.monotonic() - began.clock, 1),
                    "outcome": outcome,
                    "host": platform.node(),
                    "cpu": cpu_name(),
                    "cores": os.cpu_count(),
                    "gpus": gpus,
                    "ray": address or "local",
                    **(facts or {}),
                },
            )


def summary(log: dict[str, Any]) -> str:
    """The log in a few words: the recorded invocations' total wall hours, where they ran, how many
    there were and how many did not finish (a killed one, SIGKILL, is not recorded at all)."""
    invocations = log["invocations"]
    if not invocations:
        return "not recorded"
    hours = sum(float(item["wall_s"]) for item in invocations) / 3600
    machines = sorted({_machine(item) for item in invocations})
    count = f"{len(invocations)} invocation{'s' if len(invocations) > 1 else ''}"
    unfinished = sum(item.get("outcome") != FINISHED for item in invocations)
    count += f", {unfinished} of them stopped before the end" if unfinished else ""
    if cached := invocations[0].get("members_cached"):  # trained by a run the log does not hold
        count += f"; {cached} of its {invocations[0]['members']} members were trained before the log began"
    return f"wall {hours:.2f} h on {'; '.join(machines)} ({count})"


def _machine(invocation: dict[str, Any]) -> str:
    gpus = int(invocation.get("gpus") or 0)
    where = f"{invocation.get('cores')} cores ({invocation.get('cpu')})"
    where += f" and {gpus} GPU{'s' if gpus > 1 else ''}" if gpus else ""
    ray = invocation.get("ray", "local")
    return where if ray == "local" else f"Ray cluster {ray}, driver on {where}"
