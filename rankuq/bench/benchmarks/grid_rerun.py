"""Grid resume: run a grid into a fresh run directory with `rankuq run`, then type the same command
again, and compare wall times and MLflow run counts (issue 6's bar: the rerun takes under 10 % of the
first run's time and adds no MLflow runs). Each run is a fresh process, as a user would start it, so
the rerun pays its imports; the load average is printed beside each figure.

    python -m rankuq.bench.benchmarks.grid_rerun [--grid rankuq/bench/grids/scale.yaml] [--run-dir DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.results.tracking import Tracker

SCALE_GRID = Path(__file__).parents[1] / "grids" / "scale.yaml"


@dataclass(frozen=True)
class Timing:
    seconds: float
    mlflow_runs: int
    load: tuple[float, float, float]  # 1, 5 and 15-minute load averages when the run ended


def timed_run(grid: Path, run_dir: Path) -> Timing:
    """One `rankuq run GRID --run-dir RUN_DIR` in a fresh process (its progress goes to stderr)."""
    command = [sys.executable, "-m", "rankuq.bench.cli", "run", str(grid), "--run-dir", str(run_dir)]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return Timing(seconds, len(Tracker(default_tracking_uri(run_dir)).mlflow_run_keys()), os.getloadavg())


def measure(grid: Path, run_dir: Path) -> tuple[Timing, Timing]:
    """The first run into ``run_dir`` (which must not hold a run yet) and the rerun."""
    if run_dir.exists() and any(run_dir.iterdir()):
        raise SystemExit(f"{run_dir} is not empty: the first run must start from nothing")
    return timed_run(grid, run_dir), timed_run(grid, run_dir)


def report(first: Timing, rerun: Timing) -> str:
    rows = [
        [name, f"{timing.seconds:.1f}", timing.mlflow_runs, " ".join(f"{x:.2f}" for x in timing.load)]
        for name, timing in (("first run", first), ("rerun", rerun))
    ]
    table = tabulate(rows, ["run", "wall (s)", "MLflow runs", "load average at the end"], tablefmt="github")
    ratio = rerun.seconds / first.seconds
    new_runs = rerun.mlflow_runs - first.mlflow_runs
    return f"{table}\n\nrerun / first run: {ratio:.1%} (bar: < 10%); MLflow runs the rerun added: {new_runs}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", type=Path, default=SCALE_GRID)
    parser.add_argument("--run-dir", type=Path, help="a fresh folder (default: a new temporary one)")
    args = parser.parse_args()
    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="grid-rerun-"))
    print(f"grid {args.grid}, run dir {run_dir}; load average at the start: {os.getloadavg()}")
    print(report(*measure(args.grid, run_dir)))


if __name__ == "__main__":
    main()
