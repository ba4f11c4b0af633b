"""The benchmark in order: the reference run, the lost node and the killed driver, the leaderboard
over HTTP, then the scaling runs; one JSON-able dict."""

import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from rankuq.bench.benchmarks.cluster.checks import (
    checkpoints,
    fallback_warnings,
    largest_difference,
    load,
    max_at_once,
    mlflow_runs,
    placements,
    progress,
    same_board,
    same_predictions,
    same_weights,
    train_worker_actors,
    train_workers_on,
)
from rankuq.bench.benchmarks.cluster.grids import GRID, LOST_NODE_GRID, SCALING_GRID
from rankuq.bench.benchmarks.cluster.nodes import (
    LocalCluster,
    alive,
    cluster_processes,
    finish,
    mlflow_server,
    rankuq,
    wait_for,
)
from rankuq.bench.benchmarks.cluster.scaling import core_ceiling, scale


def measure(
    root: Path, data_dir: str, scaling: bool = True, trainers: Sequence[str] = ("trial",)
) -> dict[str, Any]:
    """The benchmark's JSON; the scaling runs for each of ``trainers`` (resources.trainer)."""
    grid, lost_grid = root / "grid.yaml", root / "lost-node.yaml"
    grid.write_text(yaml.safe_dump(GRID))
    lost_grid.write_text(yaml.safe_dump(LOST_NODE_GRID))
    scaling_grids = {trainer: root / f"scaling-{trainer}.yaml" for trainer in trainers}
    for trainer, path in scaling_grids.items():
        resources = {**SCALING_GRID["resources"], "trainer": trainer}
        path.write_text(yaml.safe_dump({**SCALING_GRID, "resources": resources}))
    result: dict[str, Any] = {"load_average_start": load(), "cores": os.cpu_count()}
    cluster = LocalCluster(root)
    try:
        cluster.add_worker("a", core=0)
        cluster.add_worker("b", core=1)
        result["nodes"] = len(cluster.nodes)
        address = cluster.address
        common = ["--address", address, "--data-dir", data_dir]

        # 1. The reference run: both worker nodes, nothing killed.
        reference = root / "shared" / "reference"
        log = root / "run-reference.log"
        result["reference_seconds"] = round(
            finish(
                rankuq("run", str(grid), "--run-dir", str(reference), *common, log=log, env=cluster.env), log
            ),
            1,
        )
        where = placements(reference)
        result["members"] = len(where)
        result["worker_nodes_used"] = int(where.node_id.nunique())
        result["gpu_ids_seen"] = sorted(set(where.gpu_ids))
        # Two records: the trials' own (node, gpu ids, training span) and the GCS's actor table
        # (each Train worker's node and lifetime: the span it held its GPU share).
        actors = train_worker_actors(cluster)
        result["members_training_at_once_on_one_gpu"] = max_at_once(where, ["node_id", "gpu_ids"])
        result["max_members_on_one_gpu"] = max_at_once(actors, ["node_id"])
        result["train_worker_actors"] = len(actors)
        result["same_nodes_in_both_records"] = set(actors.node_id) == set(where.node_id)
        progress(result)
        result["member_devices"] = sorted(set(where.device))
        result["processes_warned_gpu_unseen"] = fallback_warnings(cluster.temp)

        port = cluster.ports.take()
        with mlflow_server(root, port) as uri:
            # 2. Lost node, then killed driver, then the same command again.
            lost = root / "shared" / "lost-node"
            command = ["run", str(lost_grid), "--run-dir", str(lost), *common, "--tracking-uri", uri]
            log = root / "run-lost-node.log"
            driver = rankuq(*command, log=log, env=cluster.env)
            victim = cluster.nodes["b"]
            wait_for(
                lambda: alive(driver, log) and train_workers_on(victim) >= 1 and checkpoints(lost) > 0,
                420,
                "members training on node b",
            )
            result["train_workers_on_killed_node"] = train_workers_on(victim)
            cluster.kill("b")
            result["node_killed"] = True
            wait_for(
                lambda: any((lost / "predictions").rglob("*.parquet")) or driver.poll() is not None,
                600,
                "the first predictions",
            )
            if driver.poll() is None:
                os.killpg(driver.pid, signal.SIGKILL)  # the driver, mid-scoring
                driver.wait()
                result["driver_killed_mid_scoring"] = True
                result["runs_after_driver_kill"] = len(mlflow_runs(uri))
            else:
                result["driver_killed_mid_scoring"] = False
            log = root / "run-lost-node-resumed.log"
            finish(rankuq(*command, log=log, env=cluster.env), log)
            logged = mlflow_runs(uri)
            result["mlflow_runs"] = logged.level.value_counts().to_dict()
            result["duplicate_mlflow_runs"] = int(logged.key.duplicated().sum())
            result["predictions_identical"] = same_predictions(reference, lost)
            result["predictions_max_abs_difference"] = largest_difference(reference, lost)
            result["member_weights_identical"] = same_weights(reference, lost)
            # A third run of the finished grid: all cached, adds no MLflow run.
            log = root / "run-lost-node-again.log"
            finish(rankuq(*command, log=log, env=cluster.env), log)
            result["runs_added_by_rerun"] = len(mlflow_runs(uri)) - len(logged)

            # 3. The leaderboard over HTTP, from another process.
            out = root / "board-over-http"
            log = root / "leaderboard.log"
            finish(
                rankuq("leaderboard", "--tracking-uri", uri, "--out", str(out), log=log, env=cluster.env), log
            )
            result["leaderboard_over_http_equal"] = same_board(lost, out)
            progress(result)

        # 4. Scaling: one worker node (a), then two (a and a fresh b).
        if scaling:
            result |= scale(cluster, scaling_grids, root, common)
            result |= core_ceiling()
        else:
            result["speedup_two_nodes"] = None
    finally:
        cluster.stop()
    result["stray_processes"] = len(cluster_processes(root))
    result["load_average_end"] = load()
    return result
