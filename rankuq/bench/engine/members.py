"""Trained members: each one a Ray Tune trial running a Ray Train ``TorchTrainer`` (or training in
the trial itself), checkpointed every epoch and saved as a Hugging Face folder. What trains one member
in a process is ``bench.engine.member_training``."""

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import ray
import ray.train.torch
from ray import train, tune
from ray.train.torch import TorchTrainer
from ray.tune.experiment import Trial
from torch import nn

from rankuq.atomic import staged_folder
from rankuq.bench.engine.checkpoints import (
    BEST_FOLDER,
    EPOCH_PREFIX,
    STATE_FILE,
    epoch_checkpoints,
    load_checkpoint,
)
from rankuq.bench.engine.member_training import fine_tune_member
from rankuq.bench.engine.placement_groups import OrphanSweeper
from rankuq.bench.engine.session import leave_ctrl_c_to_driver
from rankuq.bench.engine.training_loop import TrainState
from rankuq.bench.planning.jobs import Spec, TrainJob
from rankuq.bench.rundir.layout import TRAINING_FILE
from rankuq.errors import RankuqError
from rankuq.methods.base import NeuralMethod

# A member's result key: the message of its deterministic refusal (the GPU-memory preflight). A
# refusal is reported as the trial's result, not raised: Tune's and Ray Train's FailureConfig retry
# every raised error (Ray 2.60 has no per-exception policy), and the card's holders do not leave
# between retries. The driver raises it once all trials end.
REFUSED = "refused"


class MemberTrial(Spec):
    """A member trial's Tune config (its entry of the param space): the job it trains."""

    job: TrainJob


class MemberReport(Spec):
    """What a member's trial reports to Tune, by the wire's keys: its training record and the folder of
    its checkpoint, or its refusal (``REFUSED``). Read from a trial's result where Tune hands it over;
    Tune's own keys beside these are ignored."""

    refused: str | None = None
    training: dict[str, object] | None = None
    checkpoint_dir: str | None = None

    def report(self) -> None:
        """Report this to Tune, from inside the trial."""
        tune.report(self.model_dump(exclude_none=True))


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


def train_member(config: dict[str, object]) -> None:
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

    def publish(metrics: dict[str, object], save: Callable[[Path], None]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            save(Path(folder))
            # Every rank reports; the ranks' weights agree, so rank 0's checkpoint is kept.
            train.report(metrics, checkpoint=train.Checkpoint.from_directory(folder) if rank == 0 else None)

    def refuse(message: str) -> None:
        # With an (empty) checkpoint: Ray Train 2.60's result keeps only metrics reported with one.
        # train_trial passes the refusal on to Tune.
        with tempfile.TemporaryDirectory() as folder:
            train.report({REFUSED: message}, checkpoint=train.Checkpoint.from_directory(folder))

    fine_tune_member(job, publish, resume, refuse, rank)


def train_in_trial(job: TrainJob) -> None:
    """The Tune trial of a ``TrainJob`` with trainer "trial": the member trains in this process. Its
    epoch checkpoints go to RUN_DIR/ray/<key>/epoch-N (the storage every node sees); a retried trial
    or a rerun of the grid resumes from the latest, as from Ray Train's run folder of the same name."""
    folder = Path(job.storage) / job.key
    latest = next(reversed(epoch_checkpoints(folder)), None)
    if latest is not None:  # killed after its last epoch, before Tune saw the trial end: report it again
        metrics = json.loads((latest / TRAINING_FILE).read_text())
        if metrics.get("stopped_early") or metrics["epoch"] >= job.train.epochs:
            MemberReport(training=metrics, checkpoint_dir=str(latest)).report()
            return

    def publish(metrics: dict[str, object], save: Callable[[Path], None]) -> None:
        target = folder / f"{EPOCH_PREFIX}{metrics['epoch']}"
        with staged_folder(target) as staging:  # a trial killed mid-save keeps the epochs before
            save(staging)
            (staging / TRAINING_FILE).write_text(json.dumps(metrics))
        for older in epoch_checkpoints(folder)[:-1]:
            shutil.rmtree(older)
        MemberReport(training=metrics, checkpoint_dir=str(target)).report()

    def resume(method: NeuralMethod, model: nn.Module) -> TrainState | None:
        return load_checkpoint(latest, method, model) if latest else None

    fine_tune_member(job, publish, resume, lambda message: MemberReport(refused=message).report())


def train_trial(job: TrainJob) -> None:
    """One Tune trial = one member: a TorchTrainer of ``job.workers`` data-parallel workers sharing
    the trial's CPUs and GPUs (a fraction of a GPU only with one worker, as the grid checks)."""
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
        MemberReport(refused=str(refusal)).report()
        return
    assert result.checkpoint is not None  # every epoch reports one (a failed fit raises)
    MemberReport(training=result.metrics, checkpoint_dir=result.checkpoint.path).report()


class _MemberSaver(tune.Callback):
    """Moves each member's model into ``models_dir`` as soon as its trial completes, so an
    interrupted grid keeps every finished member."""

    def __init__(self, models_dir: Path, storage: Path, advance: Callable[[str], None]) -> None:
        self.models_dir, self.storage, self.advance = models_dir, storage, advance

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        report = MemberReport.from_dict(trial.last_result)
        if report.refused is not None:  # trained nothing; the driver raises its refusal
            return
        assert report.checkpoint_dir is not None and report.training is not None  # a trial that completed
        key = MemberTrial.from_dict(trial.config).job.key
        shutil.rmtree(self.models_dir / key, ignore_errors=True)  # an earlier version's folder
        checkpoint = Path(report.checkpoint_dir)
        best = checkpoint / BEST_FOLDER  # early stopping keeps the best dev epoch's member
        with staged_folder(self.models_dir / key) as staging:  # a killed copy is no model
            shutil.copytree(
                best if best.is_dir() else checkpoint,
                staging,
                ignore=shutil.ignore_patterns(STATE_FILE, BEST_FOLDER, ".*"),
                dirs_exist_ok=True,
            )
            (staging / TRAINING_FILE).write_text(json.dumps(report.training))
        shutil.rmtree(self.storage / key)  # its epoch checkpoints, optimizer state included
        self.advance(key)

    def __getstate__(self) -> dict[str, object]:
        return {}  # Tune pickles its callbacks with the experiment state, which a rerun never restores


def _trial_name(trial: Trial) -> str:
    return f"member-{MemberTrial.from_dict(trial.config).job.key}"


def member_trial(config: dict[str, object]) -> None:
    """One Tune trial = one member, trained where its job says (``ResourcesConfig.trainer``)."""
    job = MemberTrial.from_dict(config).job
    (train_in_trial if job.trainer == "trial" else train_trial)(job)


def _trial_resources(config: dict[str, object]) -> tune.PlacementGroupFactory:
    """What a member's trial holds: its CPUs and GPU share where it trains itself; where a Train
    worker trains, nothing (the worker holds them; a bundle cannot be empty)."""
    job = MemberTrial.from_dict(config).job
    if job.trainer == "trial":
        return tune.PlacementGroupFactory([{"CPU": job.cpus, "GPU": job.gpus}])
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
        param_space={"job": tune.grid_search([_stored(job, storage).to_dict() for job in jobs])},
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
            callbacks=[_MemberSaver(models_dir, storage, advance), OrphanSweeper()],
            # A failed trial starts a new TorchTrainer of the same name, which resumes from its checkpoint.
            failure_config=tune.FailureConfig(max_failures=2),
        ),
    )
    for result in tuner.fit():  # type: ignore[attr-defined]  # ResultGrid iterates by __getitem__
        raise_failure(result)


def raise_failure(result: tune.Result) -> None:
    """Raise a RankuqError if the Tune ``result`` of a member is a failure or a refusal: the member's
    own RankuqError (the preflight's) by its message alone, not buried in Ray's traceback."""
    if result.config is None:  # Tune has no result of the trial at all, not even its config
        raise RankuqError(f"a member's trial failed before it reported: {result.error}")
    key = MemberTrial.from_dict(result.config).job.key
    if (refusal := MemberReport.from_dict(result.metrics or {}).refused) is not None:
        raise RankuqError(f"training member {key}: {refusal}")
    if result.error is not None:
        if (cause := rankuq_cause(result.error)) is not None:
            raise RankuqError(f"training member {key}: {cause}") from None
        raise RankuqError(f"training member {key} failed: {result.error}")


def _stored(job: TrainJob, storage: Path) -> TrainJob:
    """``job`` with its Tune/Train storage set, as it is handed to Ray."""
    return job.model_copy(update={"storage": str(storage)})
