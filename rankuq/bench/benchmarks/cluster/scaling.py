"""Scaling: the same grid on one worker node, then on two, and the most two cores can give here."""

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from rankuq.bench.benchmarks.cluster.checks import load, member_times, progress
from rankuq.bench.benchmarks.cluster.grids import SCALING_EPOCHS
from rankuq.bench.benchmarks.cluster.nodes import LocalCluster, finish, rankuq

# Run pinned to one core (argv[1]): 30 training steps of MiniLM-L2 on real WikiQA pairs, as a member
# trains; prints the seconds they took (after 3 steps of warm-up).
_STEPS = """
import os, sys, time, torch
os.sched_setaffinity(0, {int(sys.argv[1])})
torch.set_num_threads(1)
from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench.benchmarks.method_cost import wikiqa_batches
config = ModelConfig(layers=2)
batches = wikiqa_batches(config, 16 * 33, 16)
model = methods.create("bert", {}).build_model(config, 0).train()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
for step, inputs in enumerate(batches):
    if step == 3:
        start = time.perf_counter()
    model(**inputs).logits.sum().backward()
    optimizer.step()
    optimizer.zero_grad()
print(time.perf_counter() - start)
"""


def core_ceiling() -> dict[str, Any]:
    """The speedup two one-core nodes could reach at most here: the same training steps in one process
    alone, then in two at once, one per core: 2 × alone / the slower of the two."""

    def steps(*cores: int) -> list[float]:
        started = [
            subprocess.Popen([sys.executable, "-c", _STEPS, str(core)], stdout=subprocess.PIPE, text=True)
            for core in cores
        ]
        return [float(process.communicate(timeout=600)[0].split()[-1]) for process in started]

    start_load = load()
    (alone,) = steps(0)
    both = steps(0, 1)
    return {
        "core_ceiling": round(2 * alone / max(both), 2),
        "core_ceiling_seconds": {"alone": round(alone, 1), "two_at_once": [round(t, 1) for t in both]},
        "core_ceiling_load_average": start_load,
    }


def scale(cluster: LocalCluster, grids: dict[str, Path], root: Path, common: list[str]) -> dict[str, Any]:
    """Wall time of the same grid on one worker node and on two, for each trainer in ``grids`` (members
    trained in their own Tune trials, and as Ray Train TorchTrainers); the shard cache is shared, so
    every run times training, scoring, probes and tracking only."""
    seconds: dict[str, dict[str, float]] = {trainer: {} for trainer in grids}
    loads: dict[str, dict[str, list[float]]] = {trainer: {} for trainer in grids}
    members: dict[str, dict[str, dict[str, float]]] = {trainer: {} for trainer in grids}
    for nodes, label in ((1, "one_node"), (2, "two_nodes")):  # node b, killed before, comes back for two
        if nodes == 2 and "b" not in cluster.nodes:
            cluster.add_worker("b", core=1)
        for trainer, grid in grids.items():
            run_dir = root / "shared" / f"scaling-{trainer}-{nodes}"
            run_dir.mkdir(parents=True)
            shutil.copytree(root / "shared" / "reference" / "cache", run_dir / "cache")
            log = root / f"run-scaling-{trainer}-{nodes}.log"
            loads[trainer][label] = load()
            driver = rankuq("run", str(grid), "--run-dir", str(run_dir), *common, log=log, env=cluster.env)
            seconds[trainer][label] = round(finish(driver, log), 1)
            members[trainer][label] = member_times(run_dir)
            progress({f"scaling_{trainer}_{label}": seconds[trainer][label], "load": loads[trainer][label]})
    speedup = {trainer: round(took["one_node"] / took["two_nodes"], 2) for trainer, took in seconds.items()}
    return {
        "speedup_two_nodes": speedup["trial"],  # members in their own trials (resources.trainer: trial)
        "speedup_two_nodes_ray_train": speedup.get("train"),  # each a TorchTrainer (the default), if run
        "scaling_epochs": SCALING_EPOCHS,
        "scaling_seconds": seconds,
        "scaling_load_average": loads,
        "scaling_member_seconds": members,
        "scaling_command": "rankuq run scaling-TRAINER.yaml --address HEAD (SCALING_GRID, resources.trainer)",
    }
