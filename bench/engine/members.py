"""Trained members: each one a Ray Tune trial running a Ray Train ``TorchTrainer`` (or training in
the trial itself), checkpointed every epoch and saved as a Hugging Face folder."""

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import ray
import ray.train.torch
import torch
from ray import train, tune
from ray.train.torch import TorchTrainer
from torch import nn

from rankuq import methods
from rankuq.backbone import ModelConfig, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.checkpoints import (
    BEST_FOLDER,
    EPOCH_PREFIX,
    STATE_FILE,
    epoch_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from rankuq.bench.engine.scoring import dev_metric
from rankuq.bench.engine.session import leave_ctrl_c_to_driver
from rankuq.bench.engine.training_loop import TrainState, balanced_pairs, fine_tune
from rankuq.bench.planning.jobs import SearchTrial, TrainJob
from rankuq.bench.rundir.atomic import staged_folder
from rankuq.bench.rundir.layout import TRAINING_FILE
from rankuq.errors import RankuqError
from rankuq.gpu_memory import check_member_room
from rankuq.methods.base import NeuralMethod, inference_device
from rankuq.shards import read_shards

# A member's result key: the message of its deterministic refusal (the GPU-memory preflight). A
# refusal is reported as the trial's result, not raised: Tune's and Ray Train's FailureConfig retry
# every raised error (Ray 2.60 has no per-exception policy), and the card's holders do not leave
# between retries. The driver raises it once all trials end.
REFUSED = "refused"


def rankuq_cause(error: BaseException | None) -> RankuqError | None:
    """The RankuqError a trial raised, found under Ray's wrappers (a RayTaskError's ``cause``, Ray
    Train's TrainingFailedError and its workers' failures, ``raise … from``), or None."""
    seen: set[int] = set()
    pending: list[object] = [error]
    while pending:
        found = pending.pop()
        if not isinstance(found, BaseException) or id(found) in seen:
            continue
        if isinstance(found, RankuqError):
            return found
        seen.add(id(found))
        pending += [getattr(found, "cause", None), found.__cause__, found.__context__]
        pending += list((getattr(found, "worker_failures", None) or {}).values())
    return None


def _refusal(model: nn.Module, model_config: ModelConfig, train_config: TrainConfig, key: str) -> str | None:
    """The GPU-memory preflight's refusal of member ``key`` on this process's device, or None."""
    try:
        check_member_room(model, train_config.batch_size, model_config.max_length, f"member {key}")
    except RankuqError as refusal:
        return str(refusal)
    return None


def _member(job: TrainJob) -> tuple[NeuralMethod, nn.Module, list, ModelConfig, TrainConfig]:
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
    pairs: list,
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
    )


def epoch_means(losses: list[float], epochs: int) -> list[float]:
    """The mean step loss of each epoch (every epoch takes as many steps)."""
    steps = len(losses) // max(epochs, 1)
    return [float(np.mean(losses[e * steps : (e + 1) * steps])) for e in range(epochs)] if steps else []


# Hands an epoch's metrics on and stores its checkpoint, written by the callable it is given into a folder.
Publish = Callable[[dict[str, Any], Callable[[Path], None]], None]
# The training state to resume a member from (its method and fresh model given), if any.
Resume = Callable[[NeuralMethod, nn.Module], TrainState | None]


def train_member(config: dict[str, Any]) -> None:
    """Ray Train worker loop, the entry point of a ``TrainJob`` with trainer "train": fine-tune one
    member, reporting a checkpoint after every epoch. A restarted worker (FailureConfig), a retried
    trial or a rerun of the grid (same run name, so Ray Train restores its checkpoints) resumes from
    the latest one."""
    job = TrainJob.from_dict(config)
    rank = train.get_context().get_world_rank() if job.workers > 1 else 0

    def resume(method: NeuralMethod, model: nn.Module) -> TrainState | None:
        checkpoint = train.get_checkpoint()
        if checkpoint is None:
            return None
        with checkpoint.as_directory() as folder:  # a remote one is downloaded for the block only
            return load_checkpoint(Path(folder), method, model)

    def publish(metrics: dict[str, Any], save: Callable[[Path], None]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            save(Path(folder))
            # Every rank reports; the ranks' weights agree, so rank 0's checkpoint is kept.
            train.report(metrics, checkpoint=train.Checkpoint.from_directory(folder) if rank == 0 else None)

    def refuse(message: str) -> None:
        # With an (empty) checkpoint: Ray Train 2.60's result keeps only metrics reported with one.
        # train_trial passes the refusal on to Tune.
        with tempfile.TemporaryDirectory() as folder:
            train.report({REFUSED: message}, checkpoint=train.Checkpoint.from_directory(folder))

    _train(job, publish, resume, refuse, rank)


def train_in_trial(config: dict[str, Any]) -> None:
    """The Tune trial of a ``TrainJob`` with trainer "trial": the member trains in this process. Its
    epoch checkpoints go to RUN_DIR/ray/<key>/epoch-N (the storage every node sees); a retried trial
    or a rerun of the grid resumes from the latest, as from Ray Train's run folder of the same name."""
    job = TrainJob.from_dict(config["job"])
    folder = Path(job.storage) / job.key
    latest = next(reversed(epoch_checkpoints(folder)), None)
    if latest is not None:  # killed after its last epoch, before Tune saw the trial end: report it again
        metrics = json.loads((latest / TRAINING_FILE).read_text())
        if metrics.get("stopped_early") or metrics["epoch"] >= job.train.epochs:
            tune.report({"training": metrics, "checkpoint_dir": str(latest)})
            return

    def publish(metrics: dict[str, Any], save: Callable[[Path], None]) -> None:
        target = folder / f"{EPOCH_PREFIX}{metrics['epoch']}"
        with staged_folder(target) as staging:  # a trial killed mid-save keeps the epochs before
            save(staging)
            (staging / TRAINING_FILE).write_text(json.dumps(metrics))
        for older in epoch_checkpoints(folder)[:-1]:
            shutil.rmtree(older)
        tune.report({"training": metrics, "checkpoint_dir": str(target)})

    def resume(method: NeuralMethod, model: nn.Module) -> TrainState | None:
        return load_checkpoint(latest, method, model) if latest else None

    _train(job, publish, resume, lambda message: tune.report({REFUSED: message}))


def _train(
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
            best = int(np.argmax(history))  # the first best epoch wins a tie
            patience_out = len(history) - 1 - best >= stopping.patience
            stop = patience_out and state["epoch"] < train_config.epochs  # before the last epoch
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


def _placement(started: float) -> dict[str, Any]:
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


def train_trial(config: dict[str, Any]) -> None:
    """One Tune trial = one member: a TorchTrainer of ``job.workers`` data-parallel workers sharing
    the trial's CPUs and GPUs (a fraction of a GPU only with one worker, as the grid checks)."""
    job = TrainJob.from_dict(config["job"])
    trainer = TorchTrainer(
        train_member,
        train_loop_config=job.to_dict(),
        scaling_config=train.ScalingConfig(
            num_workers=job.workers,
            use_gpu=job.gpus > 0,
            resources_per_worker={"CPU": job.cpus / job.workers, "GPU": job.gpus / job.workers},
        ),
        # One worker has no peer to talk to: gloo, not Ray Train's NCCL default for GPU workers, which
        # fails where torch sees no CUDA device (logical GPUs) and gains nothing on one GPU.
        torch_config=ray.train.torch.TorchConfig(backend="gloo") if job.workers == 1 else None,
        run_config=train.RunConfig(
            name=job.key,
            storage_path=job.storage,
            failure_config=train.FailureConfig(max_failures=2),
            checkpoint_config=train.CheckpointConfig(num_to_keep=1),  # the latest epoch is all a resume needs
        ),
    )
    result = trainer.fit()
    if (refusal := (result.metrics or {}).get(REFUSED)) is not None:
        tune.report({REFUSED: refusal})
        return
    assert result.checkpoint is not None  # every epoch reports one (a failed fit raises)
    tune.report({"training": result.metrics, "checkpoint_dir": result.checkpoint.path})


class _MemberSaver(tune.Callback):
    """Moves each member's model into ``models_dir`` as soon as its trial completes, so an
    interrupted grid keeps every finished member."""

    def __init__(self, models_dir: Path, storage: Path, advance: Callable[[str], None]) -> None:
        self.models_dir, self.storage, self.advance = models_dir, storage, advance

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        if REFUSED in trial.last_result:  # trained nothing; the driver raises its refusal
            return
        key = trial.config["job"]["key"]
        shutil.rmtree(self.models_dir / key, ignore_errors=True)  # an earlier version's folder
        checkpoint = Path(trial.last_result["checkpoint_dir"])
        best = checkpoint / BEST_FOLDER  # early stopping keeps the best dev epoch's member
        with staged_folder(self.models_dir / key) as staging:  # a killed copy is no model
            shutil.copytree(
                best if best.is_dir() else checkpoint,
                staging,
                ignore=shutil.ignore_patterns(STATE_FILE, BEST_FOLDER, ".*"),
                dirs_exist_ok=True,
            )
            (staging / TRAINING_FILE).write_text(json.dumps(trial.last_result["training"]))
        shutil.rmtree(self.storage / key)  # its epoch checkpoints, optimizer state included
        self.advance(key)

    def __getstate__(self) -> dict[str, Any]:
        return {}  # Tune pickles its callbacks with the experiment state, which a rerun never restores


def remove_orphaned_placement_groups() -> int:
    """Remove this driver's placement groups whose creating actor is dead; return how many.

    A TorchTrainer's controller creates its workers' placement group, which lives as long as the
    driver's job. When a node was lost (the cluster benchmark), Ray Train 2.60's controllers aborted
    without removing theirs: 4 groups of the lost node's members stayed, the GCS moved them onto the
    surviving node, where they held its GPU shares, and scoring waited on them forever. Ray's own
    record says whose a group was (``creator_actor_dead``); Tune's are the driver's and stay.
    """
    from ray._private.state import state
    from ray.core.generated import gcs_pb2
    from ray.util.placement_group import PlacementGroup

    # A generated protobuf class, which Ray's type information leaves out.
    record = gcs_pb2.PlacementGroupTableData  # type: ignore[attr-defined]
    job = ray.get_runtime_context().get_job_id()
    removed = 0
    for raw in state._connect_and_get_accessor().get_placement_group_table():
        group = record.FromString(raw)
        orphaned = group.creator_actor_dead and group.creator_actor_id.strip(b"\xff")  # nil: a driver's
        if orphaned and group.creator_job_id.hex() == job and group.state != record.REMOVED:
            ray.util.remove_placement_group(PlacementGroup(ray.PlacementGroupID(group.placement_group_id)))
            removed += 1
    return removed


class _OrphanSweeper(tune.Callback):
    """Every few seconds while members train, and at the end: ``remove_orphaned_placement_groups``."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s, self.last = every_s, 0.0

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        if time.monotonic() - self.last > self.every_s:
            self.last = time.monotonic()
            self._sweep()

    def on_experiment_end(self, trials: list, **info: Any) -> None:
        self._sweep()

    def _sweep(self) -> None:
        try:  # Ray's private GCS accessor: a change there must not stop a grid
            if removed := remove_orphaned_placement_groups():
                logging.getLogger(__name__).warning(
                    "removed %d placement group(s) left by dead Ray Train controllers", removed
                )
        except Exception as error:
            logging.getLogger(__name__).warning("placement-group sweep skipped: %s", error)
            self.every_s = float("inf")

    def __getstate__(self) -> dict[str, Any]:
        return {"every_s": self.every_s, "last": 0.0}


def _trial_name(trial: Any) -> str:
    return f"member-{trial.config['job']['key']}"


def member_trial(config: dict[str, Any]) -> None:
    """One Tune trial = one member, trained where its job says (``ResourcesConfig.trainer``)."""
    (train_in_trial if config["job"]["trainer"] == "trial" else train_trial)(config)


def _trial_resources(config: dict[str, Any]) -> tune.PlacementGroupFactory:
    """What a member's trial holds: its CPUs and GPU share where it trains itself; where a Train
    worker trains, nothing (the worker holds them; a bundle cannot be empty)."""
    job = config["job"]
    if job["trainer"] == "trial":
        return tune.PlacementGroupFactory([{"CPU": job["cpus"], "GPU": job["gpus"]}])
    return tune.PlacementGroupFactory([{"CPU": 0, "memory": 1 << 20}])


def train_members(
    jobs: Sequence[TrainJob],
    models_dir: Path,
    storage: Path,
    max_concurrent: int | None,
    advance: Callable[[str], None],
) -> None:
    """Train every job as a parallel Tune trial; each model lands in ``models_dir/<key>/``."""
    if not jobs:
        return
    storage.mkdir(parents=True, exist_ok=True)
    leave_ctrl_c_to_driver()
    tuner = tune.Tuner(
        tune.with_resources(member_trial, _trial_resources),
        param_space={
            "job": tune.grid_search(
                [job.model_copy(update={"storage": str(storage)}).to_dict() for job in jobs]
            )
        },
        tune_config=tune.TuneConfig(
            max_concurrent_trials=max_concurrent,
            # A member that trains in its trial hands the process (torch imported) to the next one.
            reuse_actors=all(job.trainer == "trial" for job in jobs),
            trial_name_creator=_trial_name,
            trial_dirname_creator=_trial_name,
        ),
        run_config=tune.RunConfig(
            storage_path=str(storage),
            name="tune",
            verbose=0,
            callbacks=[_MemberSaver(models_dir, storage, advance), _OrphanSweeper()],
            # A failed trial starts a new TorchTrainer of the same name, which resumes from its checkpoint.
            failure_config=tune.FailureConfig(max_failures=2),
        ),
    )
    for result in tuner.fit():  # type: ignore[attr-defined]  # ResultGrid iterates by __getitem__
        raise_failure(result)


def raise_failure(result: Any) -> None:
    """Raise a RankuqError if the Tune ``result`` of a member is a failure or a refusal: the member's
    own RankuqError (the preflight's) by its message alone, not buried in Ray's traceback."""
    key = result.config["job"]["key"]
    if (refusal := (result.metrics or {}).get(REFUSED)) is not None:
        raise RankuqError(f"training member {key}: {refusal}")
    if result.error is not None:
        if (cause := rankuq_cause(result.error)) is not None:
            raise RankuqError(f"training member {key}: {cause}") from None
        raise RankuqError(f"training member {key} failed: {result.error}")


def _stored(job: TrainJob, storage: Path) -> TrainJob:
    """``job`` with its Tune/Train storage set, as it is handed to Ray."""
    return job.model_copy(update={"storage": str(storage)})
