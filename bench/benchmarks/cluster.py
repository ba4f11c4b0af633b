"""Distributed for real (issue 12): a head and two worker nodes started as separate Ray nodes on this
machine, worker nodes declaring one logical GPU each, a real ``mlflow server`` on 127.0.0.1, and the
grid driven through the ``rankuq`` command exactly as a cluster user types it.

What it does, in order (every process it starts binds to 127.0.0.1 and is stopped at the end, also on
failure; the cluster lives under its own ``--temp-dir``, so no other ``ray.init()`` on the machine
finds it):

1. reference: ``rankuq run GRID --address <head>`` (5-member ensembles, two seeds, ``gpus_per_trial:
   0.2``): where each member trained (node, ``ray.get_gpu_ids()``, start and end) comes from the
   member's own Ray Train report (``training.json`` beside its weights);
2. lost node + killed driver: the same grid into another run directory with ``--tracking-uri
   http://127.0.0.1:PORT``; one worker node is SIGKILLed (its raylet and every worker) while members
   train on it, then the driver is SIGKILLed mid-scoring and the same command is run again; its
   predictions are compared with the reference's, its MLflow runs counted;
3. ``rankuq leaderboard --tracking-uri`` from another process against the run directory's tables;
4. scaling: a heavier grid (one member per node at a time) on one worker node, then on two, with its
   members trained in their own Tune trials (``resources.trainer: trial``: ``speedup_two_nodes``) and,
   with ``--trainers trial,train``, as Ray Train TorchTrainers (the default:
   ``speedup_two_nodes_ray_train``; 6 more minutes), and the most two cores can give: the same
   training steps in one process alone, then in two at once, one per core (``core_ceiling``; 2.0
   where the cores do not slow each other down).

    python -m rankuq.bench.benchmarks.cluster [--skip-scaling] [--keep] [--trainers trial,train]

Prints one JSON object. Take the scaling figure on a quiet machine: the load average is in the JSON.
"""

import argparse
import contextlib
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil
import pyarrow.parquet as pq
import yaml

from rankuq.bench.layout import TRAINING_FILE

# ray, mlflow and rankuq as modules of this interpreter: console scripts may name another one
RAY = [sys.executable, "-m", "ray.scripts.scripts"]
MLFLOW = [sys.executable, "-m", "mlflow"]
RANKUQ = [sys.executable, "-m", "rankuq.bench.cli"]
HOST = "127.0.0.1"

# The grid every node runs: 2 seeds × 5 ensemble members = 10 members, a fifth of a logical GPU each,
# so each worker node packs five; three epochs so that a killed node leaves members mid-training.
GRID: dict[str, Any] = {
    "name": "cluster",
    "tasks": ["wikiqa"],
    "methods": {"ensemble": {"M": 5}},
    "seeds": [0, 1],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 400, "batch_size": 16, "epochs": 3},
    "eval": {"split": "test", "batch_size": 256, "precision": "fp32"},
    "resources": {"gpus_per_trial": 0.2, "cpus_per_trial": 0.2},
}
# The lost-node run: seed 0 of the same grid (the same members and predictions, by content key), half
# a GPU per member so that both worker nodes train two members at once and the fifth waits.
LOST_NODE_GRID: dict[str, Any] = {
    **GRID,
    "seeds": [0],
    "resources": {"gpus_per_trial": 0.5, "cpus_per_trial": 0.2},
}
# Scaling: one member per worker node at a time (a whole logical GPU and CPU each), more compute per
# member so that training, which the nodes share, dominates the serial driver work (about 25 s here:
# the driver's start, scoring a cell's two splits, probes, MLflow; 8 epochs gave 1.34-1.62, 16 more).
SCALING_EPOCHS = 16
SCALING_GRID: dict[str, Any] = {
    **GRID,
    "name": "cluster-scaling",
    "methods": {"ensemble": {"M": 6}},
    "seeds": [0],
    "train": {"max_queries": None, "batch_size": 16, "epochs": SCALING_EPOCHS},
    "resources": {"gpus_per_trial": 1, "cpus_per_trial": 1},
}


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


class Ports:
    """Ports for this cluster from a random window nobody listens on (other engineers' clusters use
    Ray's defaults or their own windows)."""

    def __init__(self, count: int = 1000) -> None:  # 4 nodes × 126 + the server
        for _ in range(50):
            start = random.randrange(20000, 60000 - count)
            if all(_port_free(p) for p in range(start, start + count, 7)) and _port_free(start):
                self.next, self.end = start, start + count
                return
        raise RuntimeError("no free port window")

    def take(self, count: int = 1) -> int:
        while not all(_port_free(p) for p in range(self.next, self.next + count)):
            self.next += 1
        first, self.next = self.next, self.next + count
        if self.next > self.end:
            raise RuntimeError("port window exhausted")
        return first


@dataclass
class Node:
    name: str
    process: subprocess.Popen
    log: Path
    pids: set[int] = field(default_factory=set)  # every process of the node seen so far

    def refresh(self) -> set[int]:
        """The node's processes: `ray start --block` and its descendants (raylet, workers, agents)."""
        with contextlib.suppress(psutil.NoSuchProcess):
            root = psutil.Process(self.process.pid)
            self.pids |= {root.pid, *(child.pid for child in root.children(recursive=True))}
        return self.pids

    def kill(self) -> None:
        """SIGKILL every process of the node at once (as a lost machine)."""
        for pid in sorted(self.refresh()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait()


class LocalCluster:
    """A Ray head and worker nodes on this machine, each a `ray start --block` process with its own
    CPUs (pinned to its own core with ``cores``) and logical GPUs, under a private ``--temp-dir``."""

    def __init__(self, root: Path, head_cpus: float = 1) -> None:
        self.root, self.ports, self.nodes = root, Ports(), {}
        # Ray 2.60's `ray start` rewrites 127.0.0.1 to the machine's address and its gRPC servers
        # listen on every interface: token authentication with this cluster's own token (not the
        # shared ~/.ray/auth_token) keeps every other process on the machine out.
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
        }
        self.env.pop("RAY_AUTH_TOKEN_PATH", None)
        self.temp = root / "ray"
        self.gcs_port = self.ports.take()
        self.address = f"{HOST}:{self.gcs_port}"
        try:
            self._start("head", head_cpus, 0, None, ["--head", f"--port={self.gcs_port}"])
        except BaseException:
            self.stop()
            raise

    def _start(self, name: str, cpus: float, gpus: float, core: int | None, extra: list[str]) -> None:
        ports = self.ports
        workers = ports.take(120)
        args = [
            *RAY,
            "start",
            "--block",
            f"--node-ip-address={HOST}",
            f"--temp-dir={self.temp}",
            f"--num-cpus={cpus:g}",
            f"--num-gpus={gpus:g}",
            "--disable-usage-stats",
            "--object-store-memory=200000000",
            f"--node-manager-port={ports.take()}",
            f"--object-manager-port={ports.take()}",
            f"--metrics-export-port={ports.take()}",
            f"--dashboard-agent-listen-port={ports.take()}",
            f"--dashboard-agent-grpc-port={ports.take()}",
            f"--runtime-env-agent-port={ports.take()}",
            f"--min-worker-port={workers}",
            f"--max-worker-port={workers + 119}",
            *extra,
        ]
        if "--head" in extra:
            args.append("--include-dashboard=false")
        else:
            args.append(f"--address={self.address}")
        if core is not None and (os.cpu_count() or 1) > core:
            args = ["taskset", "-c", str(core), *args]  # the node's processes inherit its core
        log = self.root / f"node-{name}.log"
        with log.open("w") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        self.nodes[name] = Node(name, process, log)
        self._wait_up(name)

    def _wait_up(self, name: str, timeout: float = 120) -> None:
        node, deadline = self.nodes[name], time.time() + timeout
        while time.time() < deadline:
            if node.process.poll() is not None:
                raise RuntimeError(f"ray node {name} exited: {node.log.read_text()[-2000:]}")
            if "Ray runtime started" in node.log.read_text():
                node.refresh()
                return
            time.sleep(0.5)
        raise RuntimeError(f"ray node {name} did not start in {timeout:.0f} s: {node.log}")

    def add_worker(self, name: str, cpus: float = 1, gpus: float = 1, core: int | None = None) -> None:
        self._start(name, cpus, gpus, core, [])

    def kill(self, name: str) -> None:
        self.nodes.pop(name).kill()

    def stop(self) -> None:
        """Stop every node: SIGTERM to each `ray start --block` (it stops its own processes), then
        SIGKILL to anything of the cluster still alive (by pid: the node trees and any process whose
        command line names this cluster's private folder)."""
        for node in self.nodes.values():
            node.refresh()
            with contextlib.suppress(ProcessLookupError):
                node.process.terminate()
        for node in self.nodes.values():
            try:
                node.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                node.process.kill()
        time.sleep(1)
        leftovers = {pid for node in self.nodes.values() for pid in node.pids} | set(
            cluster_processes(self.root)
        )
        for pid in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                psutil.Process(pid).kill()
        self.nodes.clear()


def cluster_processes(root: Path) -> list[int]:
    """Pids of live processes whose command line names ``root`` (this cluster's private folder)."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            if any(str(root) in part for part in process.info["cmdline"] or []):
                found.append(process.info["pid"])
    return found


@contextlib.contextmanager
def mlflow_server(root: Path, port: int) -> Iterator[str]:
    """A real tracking server on 127.0.0.1: SQLite backend, artifacts proxied to a local folder."""
    log = root / "mlflow-server.log"
    args = [
        *MLFLOW,
        "server",
        "--host",
        HOST,
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow-server.db'}",
        "--artifacts-destination",
        str(root / "mlartifacts"),
    ]
    with log.open("w") as out:
        server = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    uri = f"http://{HOST}:{port}"
    try:
        deadline = time.time() + 120
        while not _answers(f"{uri}/health"):
            if server.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"mlflow server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield uri
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)  # the server and its uvicorn workers
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def rankuq(*args: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """The `rankuq` command in a subprocess of its own session (so a SIGKILL reaches only it)."""
    with log.open("w") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [*RANKUQ, *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )


def finish(process: subprocess.Popen, log: Path, timeout: float = 900) -> float:
    """Wait for a `rankuq` process; raise with its log's tail if it failed."""
    start = time.perf_counter()
    code = process.wait(timeout=timeout)
    if code != 0:
        raise RuntimeError(f"`rankuq` exited {code}: {log.read_text()[-3000:]}")
    return time.perf_counter() - start


def alive(process: subprocess.Popen, log: Path) -> bool:
    """True while a `rankuq` process runs; raise with its log's tail once it has exited."""
    if process.poll() is not None:
        raise RuntimeError(f"`rankuq` exited {process.returncode} early: {log.read_text()[-3000:]}")
    return True


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
    stack = lambda frame: np.stack(frame.samples.to_numpy())  # noqa: E731
    return float(max(np.abs(stack(a[name]) - stack(b[name])).max() for name in common))


def same_weights(reference: Path, run_dir: Path) -> bool:
    """Every member ``run_dir`` trained has the reference's weights, byte for byte."""
    members = sorted((run_dir / "models").glob("*/*.safetensors"))
    return bool(members) and all(
        (reference / "models" / path.parent.name / path.name).read_bytes() == path.read_bytes()
        for path in members
    )


def mlflow_runs(uri: str) -> pd.DataFrame:
    from mlflow.tracking import MlflowClient

    from rankuq.bench.tracking import EXPERIMENT, KEY_TAG, LEVEL_TAG

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([experiment.experiment_id], max_results=5000) if experiment else []
    return pd.DataFrame(
        [{"key": r.data.tags.get(KEY_TAG), "level": r.data.tags.get(LEVEL_TAG)} for r in runs],
        columns=["key", "level"],
    )


def wait_for(condition, timeout: float, what: str, poll: float = 0.2) -> None:
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(poll)


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


def progress(result: dict[str, Any]) -> None:
    """What is measured so far, on stderr (the JSON on stdout comes at the end)."""
    print(f"so far: {json.dumps(result)}", file=sys.stderr, flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


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
            runs = mlflow_runs(uri)
            result["mlflow_runs"] = runs.level.value_counts().to_dict()
            result["duplicate_mlflow_runs"] = int(runs.key.duplicated().sum())
            result["predictions_identical"] = same_predictions(reference, lost)
            result["predictions_max_abs_difference"] = largest_difference(reference, lost)
            result["member_weights_identical"] = same_weights(reference, lost)
            # A third run of the finished grid: all cached, adds no run.
            log = root / "run-lost-node-again.log"
            finish(rankuq(*command, log=log, env=cluster.env), log)
            result["runs_added_by_rerun"] = len(mlflow_runs(uri)) - len(runs)

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--skip-scaling", action="store_true", help="leave out the timed scaling runs")
    parser.add_argument("--keep", action="store_true", help="keep the cluster's folder (logs, runs)")
    parser.add_argument(
        "--trainers",
        default="trial",
        help="comma-separated resources.trainer values to scale, trial first (trial,train adds Ray Train's)",
    )
    args = parser.parse_args()
    trainers = args.trainers.split(",")
    if trainers[0] != "trial" or not set(trainers) <= {"trial", "train"}:
        parser.error(f"--trainers {args.trainers}: give trial, or trial,train")
    from rankuq.tasks.base import data_root

    # A SIGTERM (a CI timeout, `kill`) unwinds like an exception: the cluster and the server are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    root = Path(tempfile.mkdtemp(prefix=f"rankuq-cluster-{os.getpid()}-", dir="/tmp"))
    start = time.perf_counter()
    try:
        result = measure(root, str(data_root()), scaling=not args.skip_scaling, trainers=trainers)
        result["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(result))
    finally:
        if args.keep:
            print(f"kept: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
