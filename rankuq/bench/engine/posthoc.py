"""Post-hoc calibration maps (temperature, Platt, isotonic) fitted on dev predictions as Ray tasks."""

from collections.abc import Callable, Sequence
from pathlib import Path

import ray
import ray.train.torch
import torch

from rankuq import methods
from rankuq.bench.planning.jobs import FitJob
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.methods.base import Fitted, PostHocMethod


def fit_member(config: dict[str, object]) -> Fitted:
    """The entry point of a ``FitJob``: a post-hoc method's fit on its dev lists, in a worker with
    the scorer's threads (so its numbers are those the scorer would compute)."""
    job = FitJob.from_dict(config)
    spec = job.scorer
    torch.set_num_threads(spec.threads)
    method = methods.create(spec.method, spec.params)
    assert isinstance(method, PostHocMethod)  # the plan gives post-hoc methods only
    rows = read_shards(Path(job.shards)).select(["context", "text", "label"]).to_pandas()
    return method.fit(spec.model, [Path(p) for p in spec.checkpoints], rows)


def fit_posthoc(jobs: Sequence[FitJob], on_done: Callable[[int], None] = lambda index: None) -> list[Fitted]:
    """Fit each job as a Ray task of one CPU; their states, in order. ``on_done`` hears the index
    of each job as it finishes (a progress bar)."""
    task = ray.remote(num_cpus=1)(fit_member)
    try:
        refs = [task.remote(job.to_dict()) for job in jobs]
        waiting = list(refs)
        while waiting:
            finished, waiting = ray.wait(waiting, num_returns=1)
            on_done(refs.index(finished[0]))
        return ray.get(refs)
    except ray.exceptions.RayError as error:
        cause = [line for line in str(error).splitlines() if line.strip()][-1].strip()
        raise RankuqError(f"fitting a post-hoc method failed: {cause}") from error
