"""Ray for one grid run: started at its first need (a finished grid never starts it), stopped with
the run, and the resource arithmetic the stages size their work by (trials at once, scorer threads,
scorers at once) read from the live cluster (``bench.engine.session`` starts and stops it)."""

import os
from contextlib import ExitStack

import ray

from rankuq.bench.engine.session import ray_session
from rankuq.bench.planning.plan import Plan
from rankuq.bench.rundir.layout import RunLayout


class Cluster:
    """Ray, started at its first need (a finished grid never starts it) and stopped with the run."""

    def __init__(self, address: str | None, layout: RunLayout) -> None:
        self.address, self.layout = address, layout
        self._stack = ExitStack()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def start(self) -> None:
        if not ray.is_initialized():
            # A local Ray's processes are recorded, so a rerun stops what a killed driver left.
            self._stack.enter_context(ray_session(self.address, pid_file=self.layout.ray_pids))

    def trials_at_once(self, plan: Plan) -> int:
        """Trials at once: as set, else as many as the cluster's CPUs hold."""
        resources = plan.spec.resources
        cpus = ray.cluster_resources().get("CPU", 1)
        return resources.max_concurrent_trials or max(1, int(cpus // resources.cpus_per_trial))

    def scoring_threads(self) -> int:
        """A CPU scorer's threads: the driver machine's cores, as far as Ray has them free."""
        return max(1, min(os.cpu_count() or 1, int(ray.available_resources().get("CPU", 1))))

    def cpu_scorers(self) -> int:
        """One-thread CPU scoring tasks at once: the cluster's CPUs (shards are on every node). Not
        its free CPUs: between two cells the last cell's worker still holds one for a moment, and a
        paper grid read 1 of 2 free and scored on one core."""
        return max(1, int(ray.cluster_resources().get("CPU", 1)))

    def scorers_at_once(self, gpus: float, cpus: int) -> int:
        """GPU scorers the live nodes hold at once, each with a ``gpus`` share and ``cpus`` CPUs."""
        fits = [
            min(
                int(node["Resources"].get("GPU", 0) / gpus + 1e-9),
                int(node["Resources"].get("CPU", 0) / cpus),
            )
            for node in ray.nodes()
            if node["Alive"]
        ]
        return max(1, sum(fits))
