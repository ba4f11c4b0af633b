"""Ray parts of a grid: members trained as Tune trials (each a Ray Train TorchTrainer), inference
with Ray Data ``map_batches`` and a stateful scorer over the Parquet shards."""

import contextlib
import functools
import json
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import ray
import ray.train.torch
import torch
from ray import train, tune
from ray.train.torch import TorchTrainer
from torch import nn

from rankuq import methods
from rankuq.backbone import ModelConfig, load_tokenizer
from rankuq.bench import metrics as bench_metrics
from rankuq.bench.files import staged_folder
from rankuq.bench.jobs import FitJob, ScorerSpec, SearchTrial, TrainJob
from rankuq.bench.layout import TRAINING_FILE
from rankuq.bench.leftovers import record_children
from rankuq.bench.predictions import frame_predictions, join_scores
from rankuq.bench.train import TrainConfig, TrainState, balanced_pairs, fit
from rankuq.errors import RankuqError
from rankuq.methods.base import BatchScorer, Fitted, NeuralMethod, PostHocMethod, inference_device
from rankuq.shards import read_shards, shard_files

EPOCH_PREFIX = "epoch-"  # a member trained in its Tune trial: its epoch checkpoints, epoch-1, epoch-2, …
STATE_FILE = "train-state.pt"  # the rest of an epoch checkpoint: optimizer, schedule, epoch, losses, RNGs
BEST_FOLDER = "best"  # with early stopping: the best dev epoch's member, inside each epoch checkpoint
# The candidate columns a scorer reads (contract 1 without task, split, ns and nota).
SCORED_COLUMNS = ["qid", "context", "cid", "text", "label"]


@contextmanager
def ray_session(address: str | None = None, pid_file: Path | None = None) -> Iterator[None]:
    """Use the running Ray session, or start one (local, sized to the machine, or ``address``).

    A local Ray's processes are recorded in ``pid_file`` (``bench.leftovers``: a rerun stops what a
    killed driver left); the caller's SIGTERM handler is kept (``ray.init`` installs its own)."""
    # Tune's new console output prints an experiment box and result paths even at verbose=0; the
    # grid draws its own progress bars (a user's own setting wins).
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    if ray.is_initialized():
        yield
        return
    on_sigterm = signal.getsignal(signal.SIGTERM)
    _start_ray(address)
    if callable(on_sigterm) and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)
    if pid_file is not None and address is None:
        record_children(pid_file)
    ray.data.DataContext.get_current().enable_progress_bars = False  # the grid draws its own
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # "progress bars disabled", execution plans
    try:
        yield
    finally:
        ray.shutdown()
        if pid_file is not None:
            pid_file.unlink(missing_ok=True)


RAY_START_TRIES = 3  # Ray gives a local node a fixed 30 s to register; a loaded machine may need more


def _start_ray(address: str | None) -> None:
    """``ray.init``, tried again (after stopping what the try started) when the local node timed
    out during startup, as it does on a heavily loaded machine; one error line after the last try."""
    for _ in range(RAY_START_TRIES):
        started = {child.pid for child in psutil.Process().children(recursive=True)}
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
            return
        except ConnectionError as error:  # 'auto' with no cluster running, a head that went away
            reason = " ".join(str(error).split())
            raise RankuqError(f"--address {address}: {reason}; start the cluster or drop --address") from None
        except Exception as error:  # Ray raises a bare Exception for it
            if "timed out during startup" not in str(error):
                raise
            ray.shutdown()
            _stop_children_but(started)
    raise RankuqError(
        f"Ray's local node did not start within Ray's 30 s, {RAY_START_TRIES} times (load average "
        f"{os.getloadavg()[0]:.0f}); finished work is kept: run the same command again when the "
        "machine is less busy"
    )


def _stop_children_but(pids: set[int]) -> None:
    """Stop this process's descendants other than ``pids`` (what a failed ``ray.init`` started)."""
    new = [child for child in psutil.Process().children(recursive=True) if child.pid not in pids]
    for child in new:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(new, timeout=5)


def save_checkpoint(
    folder: Path,
    state: TrainState,
    method: NeuralMethod,
    model: nn.Module,
    config: ModelConfig,
    best: dict[str, torch.Tensor] | None = None,
) -> None:
    """An epoch checkpoint: the member's folder as scoring loads it (``model`` holds the state's
    weights), the rest of the state beside it and, with early stopping, the ``best`` weights so far
    as a member of their own in BEST_FOLDER."""
    method.save_member(model, config, folder)
    torch.save({name: value for name, value in state.items() if name != "model"}, folder / STATE_FILE)
    if best is not None:
        model.load_state_dict(best)  # lent for the save, then the state's weights again
        method.save_member(model, config, folder / BEST_FOLDER)
        model.load_state_dict(state["model"])


def load_checkpoint(folder: Path, method: NeuralMethod, model: nn.Module) -> TrainState:
    """The training state an epoch checkpoint in ``folder`` holds (``save_checkpoint``'s)."""
    state = torch.load(folder / STATE_FILE, weights_only=True)
    state["model"] = method.member_state(model, folder)
    if (folder / BEST_FOLDER).is_dir():
        state["best"] = method.member_state(model, folder / BEST_FOLDER)
    return state


def _member(job: TrainJob) -> tuple[NeuralMethod, nn.Module, list, ModelConfig, TrainConfig]:
    """The method, fresh model and training pairs of a member job."""
    model_config, train_config = ModelConfig(**job.model), TrainConfig(**job.train)
    method = methods.create(job.method, job.params)
    assert isinstance(method, NeuralMethod)  # the plan gives trainers only
    table = read_shards(Path(job.shards))
    pairs = balanced_pairs(table, job.pairs_seed, train_config.max_queries, train_config.negatives)
    return method, method.build_model(model_config, job.seed), pairs, model_config, train_config


def _fit(
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
    fit(
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

    _train(job, publish, resume, rank)


def train_in_trial(config: dict[str, Any]) -> None:
    """The Tune trial of a ``TrainJob`` with trainer "trial": the member trains in this process. Its
    epoch checkpoints go to RUN_DIR/ray/<key>/epoch-N (the storage every node sees); a retried trial
    or a rerun of the grid resumes from the latest, as from Ray Train's run folder of the same name."""
    job = TrainJob.from_dict(config["job"])
    folder = Path(job.storage) / job.key
    latest = next(reversed(epoch_checkpoints(folder)), None)
    if latest is not None:  # killed after its last epoch, before Tune saw the trial end: report it again
        metrics = json.loads((latest / TRAINING_FILE).read_text())
        if metrics.get("stopped_early") or metrics["epoch"] >= TrainConfig(**job.train).epochs:
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

    _train(job, publish, resume)


def epoch_checkpoints(folder: Path) -> list[Path]:
    """The complete epoch checkpoints of a member trained in its trial, the latest last."""
    found = folder.glob(f"{EPOCH_PREFIX}*") if folder.is_dir() else []
    return sorted(found, key=lambda path: int(path.name.removeprefix(EPOCH_PREFIX)))


def _train(job: TrainJob, publish: Publish, resume_from: Resume, rank: int = 0) -> None:
    """Fine-tune ``job``'s member, resuming from the state ``resume_from`` gives if any, and
    ``publish`` every epoch's metrics and checkpoint (with early stopping, the best epoch's weights too)."""
    method, model, pairs, model_config, train_config = _member(job)
    # Data parallel: DDP on each worker's device, each worker a shard of the batches; one worker
    # trains on the GPU its trial was given, if any.
    net = ray.train.torch.prepare_model(model) if job.workers > 1 else model.to(inference_device())
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
            history.append(on_dev())
            best = int(np.argmax(history))  # the first best epoch wins a tie
            patience_out = len(history) - 1 - best >= stopping.patience
            stop = patience_out and state["epoch"] < train_config.epochs  # before the last epoch
            if best == len(history) - 1:
                kept["best"] = state["model"]  # a snapshot already (fit hands over a copy)
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
        }
        weights = kept["best"]
        publish(metrics, lambda folder: save_checkpoint(folder, state, method, model, model_config, weights))
        return stop

    _fit(job, method, model, net, pairs, (model_config, train_config), report, resume, (rank, job.workers))


def _placement(started: float) -> dict[str, Any]:
    """Where and when this worker trains, from Ray's own records: its node, the GPU ids Ray granted
    it, its device and the wall-clock span so far (what shows members packed on one GPU)."""
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "gpu_ids": ",".join(str(i) for i in ray.get_gpu_ids()),  # a string: Tune logs scalars
        "device": str(inference_device()),
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
    net = model.to(inference_device())
    on_dev = dev_metric(method, model_config, model, trial.dev_shards, trial.metric, trial.batch_size)

    def report(state: TrainState) -> None:
        tune.report({trial.metric: on_dev(), "epoch": state["epoch"]})

    _fit(job, method, model, net, pairs, (model_config, train_config), report)


def dev_metric(
    method: NeuralMethod,
    model_config: ModelConfig,
    model: nn.Module,
    dev_shards: str,
    metric: str,
    batch_size: int,
) -> Callable[[], float]:
    """``metric`` of ``model`` as it is now on the dev lists (queries with a relevant candidate)."""
    lists = read_shards(Path(dev_shards)).select(SCORED_COLUMNS).to_pandas()
    score = method.batch_scorer(model_config, [model])

    def measure() -> float:
        with torch.random.fork_rng():  # training goes on with the numbers it would draw unmeasured
            table = score_frame(score, lists, batch_size, method.probabilistic)
        return bench_metrics.compute(table, [metric], drop_queries_without_relevant=True)[metric]

    return measure


def score_frame(score: BatchScorer, frame: pd.DataFrame, batch_size: int, probabilistic: bool) -> pa.Table:
    """Predictions of ``frame``'s candidate rows, scored ``batch_size`` rows at a time in this process."""
    batches = (frame.iloc[start : start + batch_size] for start in range(0, len(frame), batch_size))
    samples, mean = join_scores([score(batch) for batch in batches])
    return frame_predictions(frame, samples, probabilistic, mean)


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
    tune.report({"training": result.metrics, "checkpoint_dir": result.checkpoint.path})


class _MemberSaver(tune.Callback):
    """Moves each member's model into ``models_dir`` as soon as its trial completes, so an
    interrupted grid keeps every finished member."""

    def __init__(self, models_dir: Path, storage: Path, advance: Callable[[str], None]) -> None:
        self.models_dir, self.storage, self.advance = models_dir, storage, advance

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
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

    record, job = gcs_pb2.PlacementGroupTableData, ray.get_runtime_context().get_job_id()
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
    # Ctrl-C stops the driver at once rather than letting Tune wind the experiment down: a rerun
    # resumes from the members' checkpoints, not from Tune's experiment state.
    os.environ["TUNE_DISABLE_SIGINT_HANDLER"] = "1"
    tuner = tune.Tuner(
        tune.with_resources(member_trial, _trial_resources),
        param_space={"job": tune.grid_search([replace(job, storage=str(storage)).to_dict() for job in jobs])},
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
    for result in tuner.fit():
        if result.error is not None:
            raise RankuqError(f"training member {result.config['job']['key']} failed: {result.error}")


class ShardScorer:
    """Stateful Ray Data scorer: loads the method's models once (on the GPU it was given, else the
    CPU), then scores batches, in bfloat16 autocast where the spec's precision is "bf16" or, by
    default ("auto"), on a GPU."""

    def __init__(self, spec: dict[str, Any]) -> None:
        scorer = ScorerSpec.from_dict(spec)
        self.threads = scorer.threads
        torch.set_num_threads(scorer.threads)
        ranker = methods.create(scorer.method, scorer.params)
        self.score = ranker.make_scorer(
            ModelConfig(**scorer.model),
            [Path(p) for p in scorer.checkpoints],
            Path(scorer.shards),
            scorer.fitted,
        )
        self.device = inference_device()
        self.bf16 = scorer.precision == "bf16" or (scorer.precision == "auto" and self.device.type == "cuda")

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        torch.set_num_threads(self.threads)  # a pooled worker may have run other work in between
        # Dropout draws come from torch's global RNG: seeded from the batch's rows, they do not depend
        # on what the worker process ran before (same shards, same numbers).
        torch.manual_seed(int(pd.util.hash_pandas_object(batch[["qid", "cid"]], index=False).sum()) % 2**63)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            samples, mean = join_scores([self.score(batch)])
        columns = {name: batch[name] for name in ("qid", "cid", "label")} | {"samples": list(samples)}
        return pd.DataFrame(columns if mean is None else columns | {"prob_mean": mean})


class PartScorer(ShardScorer):
    """Ray Data's scoring actor: each row it is handed names one batch's segments of the shard
    parts (``batch_segments``), which it reads and scores."""

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return super().__call__(read_segments(batch))


@functools.lru_cache(maxsize=1)
def _pooled_scorer(spec: str, stamps: str) -> ShardScorer:
    """The scorer a CPU worker process keeps for its next task on the same models (``spec``: the
    ScorerSpec's JSON; ``stamps``: its checkpoints' mtimes and sizes, so rewritten weights reload)."""
    return ShardScorer(json.loads(spec))


def _stamp(folder: Path) -> list[list[int]]:
    """A member folder's files' mtimes and sizes."""
    return [[f.stat().st_mtime_ns, f.stat().st_size] for f in sorted(folder.iterdir()) if f.is_file()]


def score_batch(batch: pd.DataFrame, spec: str, stamps: str) -> pd.DataFrame:
    """Ray Data task, the entry point of a ``ScorerSpec``: score the batch ``batch`` names with the
    worker's kept scorer."""
    return _pooled_scorer(spec, stamps)(read_segments(batch))


Segment = tuple[str, int, int]  # a shard part's path, first row, end row


def batch_segments(files: Sequence[Path], batch_size: int) -> list[list[Segment]]:
    """The scoring batches of a shard folder's ``files``, each as segments of parts.

    They are the batches Ray Data's ``map_batches`` cut from one block per part: parts gathered, in
    order, until they hold ``batch_size`` rows (its bundler), then cut in ``batch_size`` rows, the
    last of a bundle shorter. Handing out batches, not parts, lets any number of scorers share a cell
    while its batches, their padding and dropout seeds, and so its numbers, stay the same."""
    batches: list[list[Segment]] = []
    bundle: list[tuple[str, int]] = []
    for index, path in enumerate(files):
        bundle.append((str(path), pq.ParquetFile(path).metadata.num_rows))
        if sum(rows for _, rows in bundle) >= batch_size or index == len(files) - 1:
            batches += _cut(bundle, batch_size)
            bundle = []
    return batches


def _cut(bundle: list[tuple[str, int]], batch_size: int) -> list[list[Segment]]:
    total = sum(rows for _, rows in bundle)
    batches = []
    for start in range(0, total, batch_size):
        stop, offset, segments = min(start + batch_size, total), 0, []
        for path, rows in bundle:
            first, end = max(start, offset), min(stop, offset + rows)
            if first < end:
                segments.append((path, first - offset, end - offset))
            offset += rows
        batches.append(segments)
    return batches


@functools.lru_cache(maxsize=2)
def _part(path: str) -> pd.DataFrame:
    """A shard part's scored columns, kept for the next batch, which mostly reads the same part (parts
    never change in place: a folder's name is its content key)."""
    return pq.read_table(path, columns=SCORED_COLUMNS).to_pandas()


def read_segments(batch: pd.DataFrame) -> pd.DataFrame:
    """The candidate rows of the batch described by ``batch``'s one row (its JSON ``segments``)."""
    (segments,) = batch["segments"]
    pieces = [_part(path).iloc[first:end] for path, first, end in json.loads(segments)]
    return pd.concat(pieces, ignore_index=True)


def score_shards(
    spec: ScorerSpec,
    batch_size: int,
    gpus: float = 0.0,
    on_rows: Callable[[int], None] | None = None,
    scorers: int = 1,
) -> pa.Table:
    """Predictions (contract 2) for every candidate row of ``spec.shards``, in shard order.

    The dataset is the list of batches (``batch_segments``); its scorers read their rows from the
    shards, which every node sees. With ``gpus`` up to ``scorers`` scoring actors, each holding that
    share of a GPU and ``spec.threads`` CPUs, take the batches in turn. On CPUs the batches run as
    Ray tasks instead: Ray reuses a CPU worker process from task to task, and the scorer it keeps
    (imports, weights) spares each call the fresh actor's start-up, which cost 4 s, a third of a
    WikiQA test split's scoring. Ray does not reuse GPU workers (CUDA memory), so there an actor is
    the way. ``on_rows`` hears of every scored batch (its row count), in order, for a progress bar.
    """
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    shards = Path(spec.shards)
    batches = batch_segments(shard_files(shards), batch_size)
    # One batch per block, so that each task or actor call gets exactly one.
    dataset = ray.data.from_items(
        [{"segments": json.dumps(segments)} for segments in batches], override_num_blocks=len(batches)
    )
    common: dict[str, Any] = {"batch_size": 1, "batch_format": "pandas"}
    if gpus > 0:
        scored = dataset.map_batches(
            PartScorer,
            fn_constructor_kwargs={"spec": spec.to_dict()},
            compute=ray.data.ActorPoolStrategy(size=max(1, min(scorers, len(batches)))),
            num_gpus=gpus,
            num_cpus=spec.threads,
            **common,
        )
    else:
        stamps = json.dumps([_stamp(Path(folder)) for folder in spec.checkpoints])
        # One task at a time, on one CPU: its threads use the driver machine's free cores.
        scored = dataset.map_batches(
            score_batch,
            fn_kwargs={"spec": spec.to_json(), "stamps": stamps},
            compute=ray.data.TaskPoolStrategy(size=1),
            num_cpus=1,
            **common,
        )
    try:
        frames = []
        for frame in scored.iter_batches(batch_size=None, batch_format="pandas"):
            frames.append(frame)
            if on_rows:
                on_rows(len(frame))
        scored = pd.concat(frames, ignore_index=True)
    except ray.exceptions.RayError as error:  # the scorer's own message is the last line of Ray's
        cause = [line for line in str(error).splitlines() if line.strip()][-1].strip()
        raise RankuqError(f"scoring {spec.method} on {shards.name} failed: {cause}") from error
    samples = np.stack(scored["samples"].to_numpy())
    mean = scored["prob_mean"].to_numpy() if "prob_mean" in scored.columns else None
    return frame_predictions(scored, samples, methods.get(spec.method).probabilistic, mean)


def fit_member(config: dict[str, Any]) -> Fitted:
    """The entry point of a ``FitJob``: a post-hoc method's fit on its dev lists, in a worker with
    the scorer's threads (so its numbers are those the scorer would compute)."""
    job = FitJob.from_dict(config)
    spec = job.scorer
    torch.set_num_threads(spec.threads)
    method = methods.create(spec.method, spec.params)
    assert isinstance(method, PostHocMethod)  # the plan gives post-hoc methods only
    rows = read_shards(Path(job.shards)).select(["context", "text", "label"]).to_pandas()
    return method.fit(ModelConfig(**spec.model), [Path(p) for p in spec.checkpoints], rows)


def fit_posthoc(jobs: Sequence[FitJob]) -> list[Fitted]:
    """Fit each job as a Ray task of one CPU; their states, in order."""
    task = ray.remote(num_cpus=1)(fit_member)
    try:
        return ray.get([task.remote(job.to_dict()) for job in jobs])
    except ray.exceptions.RayError as error:
        cause = [line for line in str(error).splitlines() if line.strip()][-1].strip()
        raise RankuqError(f"fitting a post-hoc method failed: {cause}") from error
