"""SIGKILL of the `rankuq run` driver at 20 or more points of a tiny grid's run (the MLflow store's
creation included), each followed by a rerun: the same leaderboard as an undisturbed run, one MLflow
run per grid, cell and seed, and no process of a killed session alive 10 s after the rerun ends
(issue 13, bar 2).

Cheap by chaining: each rerun of a killed run is itself killed at the next point, until one ends
(a rerun resumes, so the kills move on through the run instead of redoing it). Two chains, each on
a new run directory:

- at the run's stage boundaries, watched as files of the run directory appear: a second into the
  MLflow store's creation (0, 0.1 and 0.3 s), its rename, Ray's start, a member's training, its
  weights, the predictions' staging and rename, the probes, the plots, leaderboard.csv, the report,
  the MLflow artifacts and runs;
- by time: each leg is killed a fixed time after it starts, so each gets a little further into the
  run than the last (a leg that finished nothing new gets more time); under load a run passes more
  boundaries per leg, so a second (or third) time chain follows until the kills reach 20.

Long (about 25 starts of the CLI); marked slow. It starts local Ray sessions of its own. On the
shared 2-core machine at load 12 to 22: the undisturbed run 198 s, the stage chain 14 kills in
about 17 minutes; the time chain about as long again.
"""

import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
import yaml

from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.results.tracking import Tracker

GRID = {
    "name": "kill",
    "tasks": ["wikiqa"],
    "methods": {"bm25": {}, "bert": {}},
    "seeds": [0],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"epochs": 1, "max_queries": 60},
    "eval": {"probes": ["calibration"], "dev_split": None},
    "resources": {"max_concurrent_trials": 1},
}
MLFLOW_RUNS = 1 + 2 + 2  # the grid, a cell per method, a seed run per cell
KILLS = 20
BY_TIME_CHAINS = 3  # at most: the kills reach KILLS in one on a quiet machine
LEG_TIMEOUT_S = 900
POLL_S = 0.03

# The CLI as a user runs it (its Ray session records its processes in the run directory).
DRIVER = """
import sys
from rankuq.bench.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _files(run_dir: Path) -> set[str]:
    """The run directory's files, relative (a file removed during the walk is skipped)."""
    found: set[str] = set()
    for folder, _, names in os.walk(run_dir):
        found.update(os.path.relpath(os.path.join(folder, name), run_dir) for name in names)
    return found


def _kept(files: set[str]) -> set[str]:
    """Files that are a run's finished work: not Ray's storage or its pid record, no staging, lock
    or SQLite journal file."""
    return {
        f
        for f in files
        if not f.startswith(("ray/", "ray-pids.json"))
        and not f.endswith("-journal")
        and not any(p.startswith(".") for p in f.split("/"))
    }


def _mlflow_runs(run_dir: Path) -> int:
    """Runs in the store so far (0 while it is absent or being written)."""
    store = run_dir / "mlflow.db"
    try:
        with contextlib.closing(sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True, timeout=0.1)) as db:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.Error:
        return 0


@dataclass
class Leg:
    """One start of the CLI on the run directory, watched until killed or ended."""

    grid: Path
    run_dir: Path
    started: float = 0.0
    present: set[str] = field(default_factory=set)  # the files at the last look
    appeared: dict[str, float] = field(default_factory=dict)  # file made in the leg → seconds into it
    session: set[psutil.Process] = field(default_factory=set)  # every process the driver started
    runs_before: int = 0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def watch(self, driver: subprocess.Popen) -> None:
        """Note the files made (or made again: ray-pids.json) since the last look, and the session."""
        now, files = self.elapsed, _files(self.run_dir)
        for path in files - self.present:
            self.appeared.setdefault(path, now)
        self.present = files
        with contextlib.suppress(psutil.Error):  # the driver just ended
            self.session |= set(psutil.Process(driver.pid).children(recursive=True))

    def seen(self, pattern: str) -> float | None:
        """Seconds into the leg at which a new file matching ``pattern`` appeared, or None."""
        times = [t for path, t in self.appeared.items() if re.search(pattern, path)]
        return min(times) if times else None

    def run_until(self, kill_when: Callable[["Leg"], bool]) -> bool:
        """Start the CLI and watch it until ``kill_when`` holds (then SIGKILL it: True) or it ends
        (it must end well: False)."""
        self.present, self.runs_before = _files(self.run_dir), _mlflow_runs(self.run_dir)
        env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
        argv = [sys.executable, "-c", DRIVER, "run", str(self.grid), "--run-dir", str(self.run_dir)]
        # stderr to a file: a pipe nobody reads while the leg runs could fill and stall the driver
        with tempfile.TemporaryFile() as stderr:
            self.started = time.monotonic()
            driver = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
            while driver.poll() is None:
                self.watch(driver)
                if kill_when(self):
                    driver.send_signal(signal.SIGKILL)
                    driver.wait()
                    return True
                assert self.elapsed < LEG_TIMEOUT_S, "a leg ran past its time limit"
                time.sleep(POLL_S)
            stderr.seek(0)
            assert driver.returncode == 0, stderr.read().decode(errors="replace")[-3000:]
        return False


def _alive(processes: set[psutil.Process]) -> list[str]:
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{process.pid} {process.name()} {' '.join(process.cmdline())[:120]}")
        except psutil.Error:
            continue  # gone meanwhile
    return alive


@dataclass(frozen=True)
class Reference:
    grid: Path
    run_dir: Path  # an undisturbed run of the grid
    duration: float  # its seconds


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    folder = tmp_path_factory.mktemp("kill")
    grid = folder / "grid.yaml"
    grid.write_text(yaml.safe_dump(GRID))
    leg = Leg(grid, folder / "undisturbed")
    assert not leg.run_until(lambda _: False)
    print(f"\nundisturbed run: {leg.elapsed:.1f} s; its files as they appeared (but Ray's, the lists'):")
    for path, at in sorted(leg.appeared.items(), key=lambda item: item[1]):
        if not path.startswith(("ray/", "cache/")):
            print(f"  {at:6.1f} s  {path}")
    return Reference(grid, leg.run_dir, leg.elapsed)


# A stage boundary: (what, a file made in the leg that marks it, seconds after it, a file whose
# presence when the leg starts means the run is past it).
Boundary = tuple[str, str, float, str]
STORE_DONE = r"^mlflow\.db$"
TRAINED = r"^models/[^/]+/model\.pt$"
SCORED = r"^predictions/wikiqa/bert/seed-0-[0-9a-f]+\.parquet$"
PLOTTED = r"^plots/index\.json$"
LOGGED = r"^mlartifacts/.*/index\.json$"
BOUNDARIES: list[Boundary] = [
    ("store being made", r"^\.mlflow\.db\.tmp-", 0.0, STORE_DONE),
    ("store being made", r"^\.mlflow\.db\.tmp-", 0.1, STORE_DONE),
    ("store being made", r"^\.mlflow\.db\.tmp-", 0.3, STORE_DONE),
    ("store renamed", STORE_DONE, 0.0, STORE_DONE),
    ("Ray started", r"^ray-pids\.json$", 0.0, TRAINED),
    ("member training", r"^ray/", 2.0, TRAINED),
    ("member training", r"^ray/", 6.0, TRAINED),
    ("member's weights", TRAINED, 0.0, TRAINED),
    ("predictions", r"^predictions/.*\.parquet$", 0.0, SCORED),
    ("predictions", SCORED, 0.0, SCORED),
    ("probes", r"^probes/", 0.0, PLOTTED),
    ("plots", r"^plots/.*\.png$", 0.0, PLOTTED),
    ("leaderboard.csv", r"^leaderboard\.csv$", 0.0, r"^leaderboard\.csv$"),
    ("report", r"^report\.html$", 0.0, r"^report\.html$"),
    ("MLflow artifacts", r"^mlartifacts/", 0.0, LOGGED),
    ("MLflow artifacts", r"^mlartifacts/", 0.5, LOGGED),
]


def _at_boundary(index: int) -> Callable[[Leg], bool]:
    """Kill ``after`` seconds past the boundary's file, or at once past a later boundary's (a file
    that lives milliseconds may be missed)."""
    _, pattern, after, _ = BOUNDARIES[index]
    later = "|".join(f"(?:{b[1]})" for b in BOUNDARIES[index + 1 :])

    def kill_when(leg: Leg) -> bool:
        own, past = leg.seen(pattern), leg.seen(later) if later else None
        times = [t for t in (own + after if own is not None else None, past) if t is not None]
        return bool(times) and leg.elapsed >= min(times)

    return kill_when


def _mlflow_logging(leg: Leg) -> bool:
    """The store gained a run in this leg (the grid is being logged)."""
    return leg.seen(r"^mlartifacts/") is not None and _mlflow_runs(leg.run_dir) > leg.runs_before


NextKill = Callable[[Leg | None, set[str]], Callable[[Leg], bool]]


def _chain(grid: Path, run_dir: Path, next_kill: NextKill) -> list[Leg]:
    """Legs on ``run_dir`` until one ends; ``next_kill`` picks each leg's kill point from the last leg
    and the files the run directory holds."""
    legs: list[Leg] = []
    while True:
        kill_when = next_kill(legs[-1] if legs else None, _files(run_dir))
        leg = Leg(grid, run_dir)
        legs.append(leg)
        if not leg.run_until(kill_when):
            print(f"  leg {len(legs)} ended after {leg.elapsed:.1f} s")
            return legs
        kept = len(_kept(set(leg.appeared)))
        print(f"  leg {len(legs)} killed at {leg.elapsed:.1f} s, having made {kept} files of finished work")


def _boundaries() -> NextKill:
    """Each stage boundary the run has not passed yet, in order; then MLflow logging; then none."""
    pending = list(range(len(BOUNDARIES)))
    logging_killed = False

    def next_kill(_: Leg | None, files: set[str]) -> Callable[[Leg], bool]:
        nonlocal logging_killed
        while pending:
            index = pending.pop(0)
            what, _stage, after, past = BOUNDARIES[index]
            if not any(re.search(past, path) for path in files):
                print(f"  next: {what} + {after} s")
                return _at_boundary(index)
        if not logging_killed:
            logging_killed = True
            return _mlflow_logging
        return lambda _: False

    return next_kill


def _by_time(first_s: float, floor_s: float) -> NextKill:
    """Each leg killed ``after`` seconds in: 40 % more after a leg that finished nothing new (to get
    through a long stage), half as long (down to ``floor_s``, the CLI's start) after one that did,
    so that the short stages left near the end of a resumed run are killed too."""
    after = first_s

    def next_kill(last: Leg | None, _: set[str]) -> Callable[[Leg], bool]:
        nonlocal after
        if last is not None:
            after = max(floor_s, after / 2) if _kept(set(last.appeared)) else after * 1.4
        print(f"  next: {after:.1f} s in")
        return lambda leg: leg.elapsed >= after

    return next_kill


def _check(run_dir: Path, undisturbed: Path, legs: list[Leg]) -> None:
    """The last leg's board is the undisturbed one, one MLflow run per grid, cell and seed, and no
    process of any killed leg runs 10 s after the last leg ended."""
    assert (run_dir / "leaderboard.csv").read_text() == (undisturbed / "leaderboard.csv").read_text()
    keys = Tracker(default_tracking_uri(run_dir)).mlflow_run_keys()
    assert len(keys) == len(set(keys)) == MLFLOW_RUNS, keys
    time.sleep(10)
    killed = set().union(*(leg.session for leg in legs[:-1]))
    assert not _alive(killed), _alive(killed)


@pytest.mark.slow
def test_sigkills_at_20_points_then_a_rerun_give_the_undisturbed_leaderboard(reference, tmp_path):
    started = time.monotonic()
    print("\nchain at the stage boundaries:")
    at_stages = _chain(reference.grid, tmp_path / "at-stages", _boundaries())
    _check(tmp_path / "at-stages", reference.run_dir, at_stages)
    kills = len(at_stages) - 1
    # By time: the first kill about when the imports end; later legs reach further in. How many legs
    # a chain kills depends on the machine's load (a loaded run passes more boundaries per leg), so a
    # chain on a new run directory, its first kill earlier, follows until the kills reach KILLS.
    for chain in range(1, BY_TIME_CHAINS + 1):
        print(f"chain by time {chain}:")
        schedule = _by_time(max(8.0, reference.duration / (4 + 2 * chain)), floor_s=8.0)
        by_time = _chain(reference.grid, tmp_path / f"by-time-{chain}", schedule)
        _check(tmp_path / f"by-time-{chain}", reference.run_dir, by_time)
        kills += len(by_time) - 1
        if kills >= KILLS:
            break
    print(f"{kills} kills in {time.monotonic() - started:.0f} s; load {os.getloadavg()}")
    assert kills >= KILLS
