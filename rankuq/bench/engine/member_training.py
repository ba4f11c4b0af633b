"""One member trained in this process: its method, fresh model and training pairs, the fine-tuning
with a report after every epoch (and early stopping on the dev lists), and a search trial's member,
which reports its dev metric to Tune and keeps no model. ``bench.engine.members`` runs these in Ray."""

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import ray
import ray.train.torch
import torch
from ray import tune
from torch import nn

from rankuq import methods
from rankuq.backbone import ModelConfig, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.checkpoints import save_checkpoint
from rankuq.bench.engine.scoring import dev_metric
from rankuq.bench.engine.training_loop import Pairs, TrainState, balanced_pairs, fine_tune
from rankuq.bench.planning.jobs import SearchTrial, TrainJob
from rankuq.contract import read_shards
from rankuq.errors import RankuqError
from rankuq.gpu_memory import check_member_room
from rankuq.methods.base import NeuralMethod, inference_device


def _refusal(model: nn.Module, model_config: ModelConfig, train_config: TrainConfig, key: str) -> str | None:
    """The GPU-memory preflight's refusal of member ``key`` on this process's device, or None."""
    try:
        check_member_room(model, train_config.batch_size, model_config.max_length, f"member {key}")
    except RankuqError as refusal:
        return str(refusal)
    return None


def _member(job: TrainJob) -> tuple[NeuralMethod, nn.Module, Pairs, ModelConfig, TrainConfig]:
    """The method, fresh model and training pairs of a member job."""
    model_config, train_config = job.model, job.train
    method = methods.create(job.method, job.params)
    assert isinstance(method, NeuralMethod)  # the plan gives trainers only
    table = read_shards(Path(job.shards))
    pairs = balanced_pairs(table, job.pairs_seed, train_config.max_queries, train_config.negatives)
    return method, method.build_model(model_config, job.seed), pairs, model_config, train_config


def _fine_tune(
    job: TrainJob,
    method: NeuralMethod,
    model: nn.Module,
    net: nn.Module,
    pairs: Pairs,
    configs: tuple[ModelConfig, TrainConfig],
    on_epoch_end: Callable[[TrainState], bool | None],
    resume: TrainState | None = None,
    shard: tuple[int, int] = (0, 1),
) -> None:
    """Fine-tune ``net`` (``model``, or its DDP wrapper) with the method's loss and hooks."""
    model_config, train_config = configs
    fine_tune(
        net,
        load_tokenizer(model_config),
        pairs,
        model_config,
        train_config,
        job.seed,
        loss_fn=method.loss,
        on_epoch_start=lambda: method.on_epoch_start(model),
        whole_queries=method.whole_query_batches(),
        resume=resume,
        on_epoch_end=on_epoch_end,
        shard=shard,
        parameter_groups=method.parameter_groups(model, train_config.head_lr),
        refit=method.epoch_refit(model),
    )


def epoch_means(losses: list[float], epochs: int) -> list[float]:
    """The mean step loss of each epoch (every epoch takes as many steps)."""
    steps = len(losses) // max(epochs, 1)
    return [float(np.mean(losses[e * steps : (e + 1) * steps])) for e in range(epochs)] if steps else []


# Hands an epoch's metrics on and stores its checkpoint, written by the callable it is given into a folder.
Publish = Callable[[dict[str, object], Callable[[Path], None]], None]
# The training state to resume a member from (its method and fresh model given), if any.
Resume = Callable[[NeuralMethod, nn.Module], TrainState | None]


def fine_tune_member(
    job: TrainJob, publish: Publish, resume_from: Resume, refuse: Callable[[str], None], rank: int = 0
) -> None:
    """Fine-tune ``job``'s member, resuming from the state ``resume_from`` gives if any, and
    ``publish`` every epoch's metrics and checkpoint (with early stopping, the best epoch's weights too);
    or, where the GPU-memory preflight refuses it, ``refuse`` with its message and train nothing."""
    loading = time.time()
    method, model, pairs, model_config, train_config = _member(job)
    if (refusal := _refusal(model, model_config, train_config, job.key)) is not None:
        if job.workers > 1:  # the other ranks would wait on this one in DDP: Ray Train stops them on an error
            raise RankuqError(refusal)
        refuse(refusal)
        return
    # Data parallel: DDP on each worker's device, each worker a shard of the batches; one worker
    # trains on the GPU its trial was given, if any.
    net = ray.train.torch.prepare_model(model) if job.workers > 1 else model.to(inference_device())
    # Where a member's time goes (issue 40): reading, pairing and building before training, dev
    # scoring between epochs; the rest of started → reported is tokenizing once and the steps.
    # (Named apart from the dev_<metric> series, which MLflow logs by epoch.)
    timing = {"seconds_loading": time.time() - loading, "seconds_dev_scoring": 0.0}
    resume = resume_from(method, model)
    start = resume["epoch"] if resume else 0
    started = time.time()
    stopping = train_config.early_stopping
    on_dev = (
        dev_metric(method, model_config, model, job.dev_shards, stopping.metric, job.dev_batch_size)
        if stopping
        else None
    )
    history: list[float] = list(resume.get("dev", [])) if resume else []  # the dev value of each epoch
    kept = {"best": resume.get("best") if resume else None}  # the best epoch's weights

    def report(state: TrainState) -> bool:
        stop, selection = False, {}
        if on_dev is not None and stopping is not None:
            scoring = time.time()
            history.append(on_dev())
            timing["seconds_dev_scoring"] += time.time() - scoring
            best = stopping.best_epoch(history)  # the metric's declared direction; the first best wins a tie
            stop = stopping.stops(history, state["epoch"], train_config.epochs)
            if best == len(history) - 1:
                kept["best"] = state["model"]  # a snapshot already (fine_tune hands over a copy)
            state["dev"] = list(history)
            selection = {
                f"dev_{stopping.metric}": list(history),
                "best_epoch": best + 1,
                "stopped_early": stop,
            }
        losses = state["losses"]
        metrics = {
            "epoch": state["epoch"],
            "start_epoch": start,  # where this worker began: 0 unless it resumed
            "loss": float(np.mean(losses[-50:])),
            "epoch_losses": epoch_means(losses, state["epoch"]),  # MLflow's train_loss by step
            "steps": len(losses),
            "pairs": len(pairs),
            **selection,
            **_placement(started),
            **{name: round(seconds, 3) for name, seconds in timing.items()},
        }
        weights = kept["best"]
        publish(metrics, lambda folder: save_checkpoint(folder, state, method, model, model_config, weights))
        return stop

    configs = (model_config, train_config)
    _fine_tune(job, method, model, net, pairs, configs, report, resume, (rank, job.workers))


def _placement(started: float) -> dict[str, object]:
    """Where and when this worker trains, from Ray's own records: its node, the GPU ids Ray granted
    it, its device and the wall-clock span so far (what shows members packed on one GPU)."""
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "gpu_ids": ",".join(str(i) for i in ray.get_gpu_ids()),  # a string: Tune logs scalars
        "device": str(inference_device()),
        # this process's peak of torch's allocations on its GPU so far (0 on a CPU)
        "gpu_memory_mib": torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0.0,
        "pid": os.getpid(),  # the process that trained it (a reused trial's is its predecessor's)
        "started": started,
        "reported": time.time(),
    }


def search_trial(trial: SearchTrial) -> None:
    """The entry point of a ``SearchTrial``, run in the Tune trial's own process: train the member
    and, after each epoch, score the dev lists with the model as it is and report ``trial.metric``
    (and the epoch, the scheduler's time) to Tune. It keeps no model."""
    job = trial.job
    method, model, pairs, model_config, train_config = _member(job)
    check_member_room(model, train_config.batch_size, model_config.max_length, f"member {job.key}")
    net = model.to(inference_device())
    on_dev = dev_metric(method, model_config, model, trial.dev_shards, trial.metric, trial.batch_size)

    def report(state: TrainState) -> None:
        tune.report({trial.metric: on_dev(), "epoch": state["epoch"]})

    _fine_tune(job, method, model, net, pairs, (model_config, train_config), report)
