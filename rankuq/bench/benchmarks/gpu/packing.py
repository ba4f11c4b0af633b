"""(a) Members packed on one GPU and (d) the plan's estimate: the same grid code as `rankuq run`
(``grid_run``: lists, Tune trials, scoring, MLflow) on a small WikiQA grid, once with one `bert`
member alone and once with a 5-member ensemble whose members each hold ``gpus_per_trial`` of the GPU,
read back from the members' training records (Ray's node and GPU ids, pid, start and end, torch's
peak memory per process)."""

import json
import re
import time
from pathlib import Path
from typing import Any

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.planning.plan import plan
from rankuq.bench.planning.summary import describe
from rankuq.bench.run.grid_run import GridRequest, grid_run
from rankuq.bench.rundir.layout import TRAINING_FILE, RunLayout

MEMBERS = 5
GPU_SHARE = 1 / MEMBERS  # gpus_per_trial: the five members on one GPU at once
GOAL = 1.5  # issue 30: five packed members within 1.5× the wall time of one alone


def packing_grid(name: str, methods: dict[str, dict[str, Any]], tiny: bool, gpu: bool) -> dict[str, Any]:
    """A WikiQA grid of ``methods``: MiniLM-L6 at max length 128 trained in bf16 autocast on the
    native training lists (``tiny``: the tiny random BERT on 20 questions), no probes, no dev split."""
    model = {"backbone": "tiny", "max_length": 32} if tiny else {"layers": 6, "max_length": 128}
    train: dict[str, Any] = {"ns": "native", "negatives": 4, "epochs": 1, "batch_size": 32}
    train["precision"] = "bf16"
    if tiny:
        train["max_queries"] = 20
    return {
        "name": name,
        "tasks": ["wikiqa"],
        "methods": methods,
        "seeds": [0],
        "baseline": next(iter(methods)),
        "model": model,
        "train": train,
        "eval": {"split": "test", "probes": [], "dev_split": None, "precision": "auto"},
        # one process per member ("trial"); on CPUs five 0.4-CPU shares pack onto two cores
        "resources": {
            "gpus_per_trial": GPU_SHARE if gpu else 0.0,
            "cpus_per_trial": 1.0 if gpu else 0.4,
            "trainer": "trial",
        },
    }


def members(run_dir: Path) -> list[dict[str, Any]]:
    """Every trained member's last training record (rankuq-training.json), by start."""
    records = [json.loads(path.read_text()) for path in (run_dir / "models").glob(f"*/{TRAINING_FILE}")]
    return sorted(records, key=lambda record: record["started"])


def most_at_once(records: list[dict[str, Any]]) -> int:
    """The most members whose training spans (start to last report) overlap at one moment."""
    events = sorted([(r["started"], 1) for r in records] + [(r["reported"], -1) for r in records])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    return peak


def span(records: list[dict[str, Any]]) -> float:
    """Seconds from the first member's start of training to the last one's end."""
    return float(max(r["reported"] for r in records) - min(r["started"] for r in records))


def planned_gpu_hours(grid: dict[str, Any], run_dir: Path) -> tuple[float, str]:
    """`rankuq run --plan`'s H100-hours for ``grid`` (work left in ``run_dir``), and its text."""
    spec, params = parse_grid(grid, "gpu benchmark grid")
    text = describe(plan(spec, params, RunLayout(run_dir)))
    found = re.search(r"or ([0-9.e+-]+) GPU-hours", text)
    if found is None:
        raise RuntimeError(f"--plan printed no GPU-hours:\n{text}")
    return float(found.group(1)), text


def timed_run(grid: dict[str, Any], run_dir: Path) -> tuple[float, list[dict[str, Any]]]:
    start = time.perf_counter()
    grid_run(GridRequest(grid, run_dir, source="gpu benchmark grid"))
    return time.perf_counter() - start, members(run_dir)


def packing(out: Path, tiny: bool, gpu: bool) -> dict[str, Any]:
    """One member alone, then MEMBERS packed (each on ``GPU_SHARE`` of the GPU); with the plan's
    H100-hours for the packed grid against its measured wall time."""
    alone_grid = packing_grid("gpu-alone", {"bert": {}}, tiny, gpu)
    packed_grid = packing_grid("gpu-packed", {"ensemble": {"M": MEMBERS}}, tiny, gpu)
    hours, plan_text = planned_gpu_hours(packed_grid, out / "packed")
    alone_wall, alone = timed_run(alone_grid, out / "alone")
    packed_wall, packed = timed_run(packed_grid, out / "packed")
    ratio = span(packed) / span(alone)
    return {
        "members": len(packed),
        "gpus_per_trial": packed_grid["resources"]["gpus_per_trial"],
        "train_precision": "bf16 autocast",
        "alone_train_s": round(span(alone), 2),
        "packed_train_s": round(span(packed), 2),
        "packed_over_alone": round(ratio, 3),
        "goal": GOAL,
        "goal_met": ratio <= GOAL,
        "most_at_once": most_at_once(packed),
        "processes": len({r["pid"] for r in packed}),
        "gpu_ids": sorted({r["gpu_ids"] for r in packed}),
        "devices": sorted({r["device"] for r in packed}),
        "gpu_memory_mib": [round(r.get("gpu_memory_mib", 0.0), 1) for r in packed],
        "alone_gpu_memory_mib": round(alone[0].get("gpu_memory_mib", 0.0), 1),
        "run_wall_s": {"alone": round(alone_wall, 2), "packed": round(packed_wall, 2)},
        "plan": {
            "gpu_hours": hours,
            "measured_hours": round(packed_wall / 3600, 5),
            "measured_over_plan": round(packed_wall / 3600 / hours, 3) if hours else None,
            "text": plan_text,
        },
        "spans": {"alone": _spans(alone), "packed": _spans(packed)},
    }


def _spans(records: list[dict[str, Any]]) -> list[list[float]]:
    """Each member's (start, end) in seconds from the first start: the packing plot's bars."""
    first = min(r["started"] for r in records)
    return [[round(r["started"] - first, 2), round(r["reported"] - first, 2)] for r in records]
