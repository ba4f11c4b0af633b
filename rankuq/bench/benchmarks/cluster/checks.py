"""What the benchmark measures in the runs it made: where members trained (their own reports and the
GCS's actor table), whether predictions, weights, MLflow runs and the leaderboard agree, and the
machine's load; ``progress`` prints what is measured so far."""

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import psutil
import pyarrow.parquet as pq

from rankuq.bench.benchmarks.cluster.nodes import LocalCluster, Node
from rankuq.bench.rundir.layout import TRAINING_FILE


def placements(run_dir: Path) -> pd.DataFrame:
    """Where each member trained, from its own Ray Train report (rankuq-training.json beside its weights)."""
    rows = []
    for path in sorted((run_dir / "models").glob(f"*/{TRAINING_FILE}")):
        record = json.loads(path.read_text())
        rows.append(
            {
                "member": path.parent.name,
                "node_id": record["node_id"],
                "gpu_ids": record["gpu_ids"],
                "start": record["started"],
                "end": record["reported"],
                "device": record["device"],
            }
        )
    return pd.DataFrame(rows)


# Run as a short-lived driver of the cluster: the GCS actor table (Ray's record of every actor's node,
# start and end), restricted to Ray Train's workers.
_ACTORS = """
import json, sys, ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
rows = [
    {"node_id": a["Address"]["NodeID"], "start": a["StartTime"] / 1e3, "end": a["EndTime"] / 1e3,
     "state": a["State"], "job": a["JobID"]}
    for a in ray._private.state.actors().values() if a["ActorClassName"] == "RayTrainWorker"
]
print(json.dumps(rows))
"""


def train_worker_actors(cluster: "LocalCluster") -> pd.DataFrame:
    """Every Ray Train worker actor the cluster has run: node, start and end (from the GCS)."""
    out = subprocess.run(
        [sys.executable, "-c", _ACTORS, cluster.address],
        env=cluster.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return pd.DataFrame(json.loads(out.stdout.strip().splitlines()[-1]))


def max_at_once(table: pd.DataFrame, keys: list[str]) -> int:
    """The most intervals [start, end) that overlap within one group of ``keys`` (a node, a GPU id)."""
    best = 0
    for _, group in table.groupby(keys):
        for start in group.start:  # the maximum overlap is reached at some member's start
            best = max(best, int(((group.start <= start) & (group.end > start)).sum()))
    return best


def predictions(run_dir: Path) -> dict[str, pd.DataFrame]:
    return {
        str(path.relative_to(run_dir)): pq.read_table(path).to_pandas()
        for path in sorted((run_dir / "predictions").rglob("*.parquet"))
    }


def same_predictions(reference: Path, run_dir: Path) -> bool:
    """Every predictions file of ``run_dir`` exists in ``reference`` (same content key, same name)
    with the same rows and bit-identical draws."""
    b, a = predictions(run_dir), predictions(reference)
    if not b or not b.keys() <= a.keys():
        return False
    for name in b:
        left, right = a[name], b[name]
        if list(left.qid) != list(right.qid) or list(left.cid) != list(right.cid):
            return False
        if any(list(x) != list(y) for x, y in zip(left.samples, right.samples, strict=True)):
            return False
    return True


def largest_difference(reference: Path, run_dir: Path) -> float | None:
    """The largest |difference| of a draw between ``run_dir``'s predictions and the reference's."""
    a, b = predictions(reference), predictions(run_dir)
    common = [name for name in b if name in a and len(a[name]) == len(b[name])]
    if not common:
        return None

    def stack(frame: pd.DataFrame) -> np.ndarray:
        # the column as an object array of each row's draws: a sequence of arrays, which np.stack takes
        return np.stack(cast(Sequence[np.ndarray], frame.samples.to_numpy()))

    return float(max(np.abs(stack(a[name]) - stack(b[name])).max() for name in common))


def same_weights(reference: Path, run_dir: Path) -> bool:
    """Every member ``run_dir`` trained has the reference's weights, byte for byte."""
    members = sorted((run_dir / "models").glob("*/*.safetensors"))
    return bool(members) and all(
        (reference / "models" / path.parent.name / path.name).read_bytes() == path.read_bytes()
        for path in members
    )


def same_board(run_dir: Path, out: Path) -> bool:
    """The tables (leaderboard.md) and the plots (the PNG bytes report.html embeds) that the server
    gives back are the run directory's."""
    # Line 1 is the board's title: the run directory's name there, the grid's name over MLflow.
    tables = [(folder / "leaderboard.md").read_text().split("\n", 1)[1] for folder in (run_dir, out)]
    if tables[0] != tables[1]:
        return False
    images = [
        re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", (folder / "report.html").read_text())
        for folder in (run_dir, out)
    ]
    return bool(images[0]) and images[0] == images[1]


def mlflow_runs(uri: str) -> pd.DataFrame:
    """The experiment's MLflow runs at ``uri``: a row each, with its key and level tags."""
    from mlflow.tracking import MlflowClient

    from rankuq.bench.results.mlflow_names import EXPERIMENT, KEY_TAG, LEVEL_TAG

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    found = client.search_runs([experiment.experiment_id], max_results=5000) if experiment else []
    return pd.DataFrame(
        [{"key": r.data.tags.get(KEY_TAG), "level": r.data.tags.get(LEVEL_TAG)} for r in found],
        columns=["key", "level"],
    )


def train_workers_on(node: Node) -> int:
    """Ray Train worker actors alive on ``node`` (the process title names the actor). Ray Train 2.60 runs
    the training loop in a thread of the actor, so the title does not name ``run_train_fn`` while it
    trains; a worker actor lives only as long as its member's training."""
    count = 0
    for pid in node.refresh():
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            if "ray::RayTrainWorker" in " ".join(psutil.Process(pid).cmdline()):
                count += 1
    return count


def checkpoints(run_dir: Path) -> int:
    """Epoch checkpoints Ray Train has written for members still training."""
    return len(list((run_dir / "ray").glob("*/checkpoint_*")))


def fallback_warnings(temp: Path) -> int:
    """Worker processes that said they were given a GPU share torch cannot see (their stderr logs,
    live and finished; Ray Train's print patch may echo the line twice in one process)."""
    logs = [*temp.glob("session_*/logs/worker-*.err"), *temp.glob("session_*/logs/old/worker-*.err")]
    return sum("sees no CUDA device: running on the CPU" in path.read_text(errors="replace") for path in logs)


def member_times(run_dir: Path) -> dict[str, float]:
    """Mean seconds a member trained (Ray Train's start to its report) and mean seconds between one
    member's report and the next start on the same node (the trial's start-up and wind-down)."""
    table = placements(run_dir).sort_values("start")
    gaps = [
        (group.start.iloc[1:].to_numpy() - group.end.iloc[:-1].to_numpy()).tolist()
        for _, group in table.groupby("node_id")
    ]
    flat = [gap for node in gaps for gap in node]
    return {
        "train": round(float((table.end - table.start).mean()), 1),
        "between": round(float(np.mean(flat)), 1) if flat else 0.0,
    }


def progress(result: dict[str, Any]) -> None:
    """What is measured so far, on stderr (the JSON on stdout comes at the end)."""
    print(f"so far: {json.dumps(result)}", file=sys.stderr, flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]
