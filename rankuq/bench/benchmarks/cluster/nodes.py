"""The local multi-node Ray cluster and the MLflow server the benchmark starts (every process on
127.0.0.1, stopped at the end, also on failure), and the ``rankuq`` commands it runs against them."""

import contextlib
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil

# ray, mlflow and rankuq as modules of this interpreter: console scripts may name another one
RAY = [sys.executable, "-m", "ray.scripts.scripts"]
MLFLOW = [sys.executable, "-m", "mlflow"]
RANKUQ = [sys.executable, "-m", "rankuq.bench.cli"]
HOST = "127.0.0.1"


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
    process: subprocess.Popen[bytes]
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
        self.root, self.ports = root, Ports()
        self.nodes: dict[str, Node] = {}
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
def mlflow_server(root: Path, port: int, store: list[str] | None = None) -> Iterator[str]:
    """A real tracking server on 127.0.0.1: SQLite backend, artifacts proxied to a local folder
    (``store``: other store options, such as ``bench.results.tracking.ui_command``'s)."""
    log = root / "mlflow-server.log"
    default = ["--backend-store-uri", f"sqlite:///{root / 'mlflow-server.db'}"]
    args = [
        *MLFLOW,
        "server",
        "--host",
        HOST,
        "--port",
        str(port),
        "--workers",
        "1",
        *(store or [*default, "--artifacts-destination", str(root / "mlartifacts")]),
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
            return bool(response.status == 200)
    except OSError:
        return False


def rankuq(*args: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """The `rankuq` command in a subprocess of its own session (so a SIGKILL reaches only it)."""
    with log.open("w") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [*RANKUQ, *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )


def finish(process: subprocess.Popen[bytes], log: Path, timeout: float = 900) -> float:
    """Wait for a `rankuq` process; raise with its log's tail if it failed."""
    start = time.perf_counter()
    code = process.wait(timeout=timeout)
    if code != 0:
        raise RuntimeError(f"`rankuq` exited {code}: {log.read_text()[-3000:]}")
    return time.perf_counter() - start


def alive(process: subprocess.Popen[bytes], log: Path) -> bool:
    """True while a `rankuq` process runs; raise with its log's tail once it has exited."""
    if process.poll() is not None:
        raise RuntimeError(f"`rankuq` exited {process.returncode} early: {log.read_text()[-3000:]}")
    return True


def wait_for(condition: Callable[[], object], timeout: float, what: str, poll: float = 0.2) -> None:
    deadline = time.time() + timeout
    while not condition():
        if time.time() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(poll)
