"""The papers' grids at full training scale on one GPU (issue 40, docs/gpu.md): run the grids of one
part (rankuq/bench/grids/gpu/) one after the other within a time budget, and pack what finished in a few
files that the device tool brings back; ``unpack`` turns them into run directories under paper_runs/gpu/
that ``rankuq findings`` reads like any other.

    python -m rankuq.bench.benchmarks.gpu.fullscale run OUT --part 1 [--budget-s 540] [--grid G.yaml…]
    python -m rankuq.bench.benchmarks.gpu.fullscale unpack OUT [--into paper_runs/gpu]

``run`` writes at most three files to OUT, rewritten after every grid (a call stopped at its limit
still brings back the grids finished before): results.tar.xz (each finished grid's grid.yaml,
leaderboard.csv, seeds.csv, queries.parquet, machine.json and compute.json), fullscale.json (each
grid's outcome, wall time and members' training records, the machine) and fullscale.log (every
grid's output). A grid
still running at the budget's end is stopped (Ctrl-C, then killed) and left to the next occasion: a
run directory is resumed by its content keys only on the machine that holds it, and a lent machine
keeps nothing, so the grid is the unit that two occasions split.
"""

import argparse
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from rankuq.bench.rundir.compute_log import COMPUTE_FILE

# The full-scale grids (rankuq/bench/grids/gpu/), in three parts that each fit one call's 560 s by `--plan`
# (their headers: 508, 395 and 299 s; the six are 1,202 s, more than two calls hold); in each part
# the grid with the most claims first.
GRID_FOLDER = Path(__file__).resolve().parents[2] / "grids" / "gpu"
PARTS = {1: ("paper000", "gp_fit"), 2: ("gp", "paper001"), 3: ("paper001_l4", "paper002")}
RESULT_FILES = ("grid.yaml", "leaderboard.csv", "seeds.csv", "queries.parquet")  # what findings reads
MACHINE_FILE = "machine.json"
ARCHIVE, SUMMARY, LOG = "results.tar.xz", "fullscale.json", "fullscale.log"
MAX_FILE_MIB = 16  # the device tool brings back files of at most 16 MiB
GRACE_S = 30  # after Ctrl-C, how long a stopped grid may take to stop its Ray processes
PACK_RESERVE_S = 20  # kept at the end of the budget for packing


def grid_paths(part: int | None, grids: list[Path]) -> list[Path]:
    """The given grid files, else the part's from rankuq/bench/grids/gpu/."""
    if grids:
        return grids
    if part not in PARTS:
        raise SystemExit(f"--part {part}: give one of {sorted(PARTS)} ({PARTS}), or --grid files")
    return [GRID_FOLDER / f"{name}.yaml" for name in PARTS[part]]


def run_one(grid: Path, run_dir: Path, seconds: float, log: TextIO) -> str:
    """``rankuq run`` of ``grid`` in its own process for at most ``seconds``: "finished", "failed"
    or "stopped" (the budget ran out; Ctrl-C first, so rankuq stops its Ray processes)."""
    command = [sys.executable, "-m", "rankuq.bench.cli", "run", str(grid), "--run-dir", str(run_dir)]
    log.write(f"$ {' '.join(command)}  (budget {seconds:.0f} s)\n")
    log.flush()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        return "finished" if process.wait(timeout=max(seconds, 1)) == 0 else "failed"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        return "stopped"


def training_records(run_dir: Path) -> list[dict[str, Any]]:
    """Every member's training record (rankuq-training.json): its spans, pairs and seconds."""
    from rankuq.bench.rundir.layout import TRAINING_FILE

    paths = sorted((run_dir / "models").glob(f"*/{TRAINING_FILE}"))
    return [json.loads(path.read_text()) for path in paths]


def machine() -> dict[str, Any]:
    """The device's description, as the GPU benchmark records it."""
    import torch

    from rankuq.bench.benchmarks.gpu.measure import machine as described

    return described(torch.device("cuda" if torch.cuda.is_available() else "cpu"))


def keep_tail(log: Path, limit: int) -> None:
    """``log`` cut to its last ``limit`` bytes (a file over the device tool's limit comes back not at all)."""
    if log.stat().st_size > limit:
        with log.open("rb") as text:
            text.seek(-limit, 2)
            tail = text.read()
        log.write_bytes(b"[... cut: the log's start ...]\n" + tail)


def pack(finished: dict[str, Path], out: Path) -> list[Path]:
    """``finished`` grids' result files in one xz tar under ``out`` (cut in pieces of MAX_FILE_MIB
    if it is larger); returns the files written."""
    for old in out.glob(f"{ARCHIVE}*"):
        old.unlink()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for name, run_dir in finished.items():
            for file in (*RESULT_FILES, MACHINE_FILE, COMPUTE_FILE):
                tar.add(run_dir / file, arcname=f"{name}/{file}")
    data, limit = buffer.getvalue(), MAX_FILE_MIB * 2**20 - 4096
    pieces = [data[start : start + limit] for start in range(0, len(data), limit)] or [data]
    names = [ARCHIVE] if len(pieces) == 1 else [f"{ARCHIVE}.{i:02d}" for i in range(len(pieces))]
    for name, piece in zip(names, pieces, strict=True):
        (out / name).write_bytes(piece)
    return [out / name for name in names]


def run(out: Path, grids: list[Path], budget_s: float, work: Path) -> dict[str, Any]:
    """Each grid in turn while the budget lasts; after each, the archive and the summary rewritten."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"machine": machine(), "budget_s": budget_s, "grids": {}}
    finished: dict[str, Path] = {}
    with (out / LOG).open("a") as log:
        for grid in grids:
            from rankuq.bench.config.grid import load_grid

            name = load_grid(grid)[0].name
            left = budget_s - PACK_RESERVE_S - GRACE_S - (time.monotonic() - started)
            if left < 30:  # too little to start a grid: the next occasion's
                summary["grids"][name] = {"outcome": "not started", "grid": str(grid)}
                continue
            grid_started = time.monotonic()
            outcome = run_one(grid, work / name, left, log)
            record = {
                "outcome": outcome,
                "grid": str(grid),
                "wall_s": round(time.monotonic() - grid_started, 1),
            }
            record["members"] = training_records(work / name)
            summary["grids"][name] = record
            if outcome == "finished":
                (work / name / MACHINE_FILE).write_text(json.dumps(summary["machine"], indent=1) + "\n")
                finished[name] = work / name
            log.flush()
            keep_tail(out / LOG, (MAX_FILE_MIB - 1) * 2**20)
            summary["files"] = [path.name for path in pack(finished, out)]
            summary["wall_s"] = round(time.monotonic() - started, 1)
            (out / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def unpack(out: Path, into: Path) -> list[Path]:
    """The archive (or its pieces) in ``out`` unpacked into ``into``/<grid>/, each folder checked
    by findings' reader; returns the run directories."""
    pieces = sorted(out.glob(f"{ARCHIVE}*"))
    if not pieces:
        raise SystemExit(f"{out}: no {ARCHIVE}; give the folder the device tool brought back")
    data = b"".join(piece.read_bytes() for piece in pieces)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:xz") as tar:
        names = sorted({member.name.split("/")[0] for member in tar.getmembers()})
        for name in names:
            shutil.rmtree(into / name, ignore_errors=True)  # an earlier occasion's copy of the grid
        tar.extractall(into, filter="data")
    from rankuq.bench.findings.runs import read_finished_run

    for name in names:
        read_finished_run(into / name)  # raises, naming the file, where findings could not read it
    return [into / name for name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    go = verbs.add_parser("run", help="run a part's grids within the budget; pack the results into OUT")
    go.add_argument("out", type=Path)
    go.add_argument("--part", type=int, choices=sorted(PARTS))
    go.add_argument("--grid", type=Path, action="append", default=[], help="instead of a part's grids")
    go.add_argument("--budget-s", type=float, default=560.0, help="wall seconds for all of it")
    go.add_argument("--work", type=Path, help="where the run directories go (default: a temporary folder)")
    back = verbs.add_parser("unpack", help="the brought-back files into paper_runs/gpu/<grid>/")
    back.add_argument("out", type=Path)
    back.add_argument("--into", type=Path, default=Path("paper_runs/gpu"))
    args = parser.parse_args()
    if args.verb == "unpack":
        for folder in unpack(args.out, args.into):
            print(f"unpacked: {folder}")
        return
    grids = grid_paths(args.part, args.grid)
    with tempfile.TemporaryDirectory() as scratch:
        summary = run(args.out, grids, args.budget_s, args.work or Path(scratch))
    outcomes = {name: record["outcome"] for name, record in summary["grids"].items()}
    print(
        json.dumps({"outcomes": outcomes, "files": summary.get("files", []), "wall_s": summary.get("wall_s")})
    )


if __name__ == "__main__":
    main()
