"""Ray parts of a grid: members trained as Tune trials (each a Ray Train TorchTrainer), inference
with Ray Data ``map_batches`` and a stateful scorer over the Parquet shards."""

import functools
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
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
from rankuq.bench.predictions import frame_predictions
from rankuq.bench.train import TrainConfig, TrainState, balanced_pairs, fit
from rankuq.errors import RankuqError
from rankuq.methods.base import BatchScorer, MethodParams, NeuralMethod, inference_device
from rankuq.shards import read_shards, shard_files

MODEL_FILE = "model.pt"  # a member's weights: what scoring loads
STATE_FILE = "train-state.pt"  # the rest of an epoch checkpoint: optimizer, schedule, epoch, losses, RNGs
TRAINING_FILE = "training.json"  # a trained member's last reported metrics, beside its weights


@contextmanager
def ray_session(address: str | None = None) -> Iterator[None]:
    """Use the running Ray session, or start one (local, sized to the machine, or ``address``)."""
    # Tune's new console output prints an experiment box and result paths even at verbose=0; the
    # grid draws its own progress bars (a user's own setting wins).
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    if ray.is_initialized():
        yield
        return
    ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False  # the grid draws its own
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # "progress bars disabled", execution plans
    try:
        yield
    finally:
        ray.shutdown()


def save_checkpoint(folder: Path, state: TrainState) -> None:
    """An epoch checkpoint: the weights under the name scoring loads, the rest of the state beside."""
    torch.save(state["model"], folder / MODEL_FILE)
    torch.save({name: value for name, value in state.items() if name != "model"}, folder / STATE_FILE)


def load_checkpoint(checkpoint: train.Checkpoint) -> TrainState:
    with checkpoint.as_directory() as folder:
        state = torch.load(Path(folder) / STATE_FILE, weights_only=True)
        state["model"] = torch.load(Path(folder) / MODEL_FILE, weights_only=True)
    return state


def train_member(job: dict[str, Any]) -> None:
    """Ray Train worker loop: fine-tune one member of ``job["method"]``, reporting a checkpoint after
    every epoch. A restarted worker (FailureConfig), a retried trial or a rerun of the grid (same run
    name, so Ray Train restores its checkpoints) resumes from the latest one.

    With ``job["dev"]`` it is a search trial's loop instead, run in the Tune trial itself: it reports
    the dev metric after every epoch and keeps no model.
    """
    model_config, train_config = ModelConfig(**job["model"]), TrainConfig(**job["train"])
    method = methods.get(job["method"])()
    params = method.Params(**job["params"])
    pairs = balanced_pairs(read_shards(Path(job["shards"])), job["seed"], train_config.max_queries)
    model = method.build_model(model_config, params, job["seed"])
    workers, dev = job["workers"], job.get("dev")
    # Data parallel: DDP on each worker's device, each worker a shard of the batches; one worker
    # trains on the GPU its trial was given, if any.
    net = ray.train.torch.prepare_model(model) if workers > 1 else model.to(inference_device())
    rank = train.get_context().get_world_rank() if workers > 1 else 0
    checkpoint = None if dev else train.get_checkpoint()
    resume = load_checkpoint(checkpoint) if checkpoint else None
    start = resume["epoch"] if resume else 0
    started = time.time()

    def report(state: TrainState) -> None:
        losses = state["losses"]
        metrics = {
            "epoch": state["epoch"],
            "start_epoch": start,  # where this worker began: 0 unless it resumed
            "loss": float(np.mean(losses[-50:])),
            "steps": len(losses),
            "pairs": len(pairs),
            **_placement(started),
        }
        with tempfile.TemporaryDirectory() as folder:
            save_checkpoint(Path(folder), state)
            # Every rank reports; the ranks' weights agree, so rank 0's checkpoint is kept.
            train.report(metrics, checkpoint=train.Checkpoint.from_directory(folder) if rank == 0 else None)

    fit(
        net,
        load_tokenizer(model_config),
        pairs,
        model_config,
        train_config,
        job["seed"],
        loss_fn=lambda net, inputs, labels: method.loss(net, inputs, labels, params),
        on_epoch_start=lambda: method.on_epoch_start(model, params),
        whole_queries=method.whole_query_batches(params),
        resume=resume,
        on_epoch_end=_dev_reporter(dev, method, params, model, model_config) if dev else report,
        shard=(rank, workers),
    )


def _placement(started: float) -> dict[str, Any]:
    """Where and when this worker trains, from Ray's own records: its node, the GPU ids Ray granted
    it, its device and the wall-clock span so far (what shows members packed on one GPU)."""
    return {
        "node_id": ray.get_runtime_context().get_node_id(),
        "gpu_ids": ",".join(str(i) for i in ray.get_gpu_ids()),  # a string: Tune logs scalars
        "device": str(inference_device()),
        "started": started,
        "reported": time.time(),
    }


def _dev_reporter(
    dev: dict[str, Any],
    method: NeuralMethod,
    params: MethodParams,
    model: nn.Module,
    config: ModelConfig,
) -> Callable[[TrainState], None]:
    """For a search trial, after each epoch: score the dev lists with the model as it is and report
    ``dev["metric"]`` (and the epoch, the scheduler's time) to Tune."""
    lists = read_shards(Path(dev["shards"])).select(["qid", "context", "cid", "text", "label"]).to_pandas()
    score, size, name = method.batch_scorer(params, config, [model]), dev["batch_size"], dev["metric"]

    def report(state: TrainState) -> None:
        with torch.random.fork_rng():  # training goes on with the numbers it would draw without a search
            table = score_frame(score, lists, size, method.probabilistic)
        value = bench_metrics.compute(table, [name], drop_queries_without_relevant=True)[name]
        tune.report({name: value, "epoch": state["epoch"]})

    return report


def score_frame(score: BatchScorer, frame: pd.DataFrame, batch_size: int, probabilistic: bool) -> pa.Table:
    """Predictions of ``frame``'s candidate rows, scored ``batch_size`` rows at a time in this process."""
    batches = (frame.iloc[start : start + batch_size] for start in range(0, len(frame), batch_size))
    return frame_predictions(frame, np.concatenate([score(batch) for batch in batches]), probabilistic)


def train_trial(config: dict[str, Any]) -> None:
    """One Tune trial = one member: a TorchTrainer of ``job["workers"]`` data-parallel workers sharing
    the trial's CPUs and GPUs (a fraction of a GPU only with one worker, as the grid checks)."""
    job = config["job"]
    workers = job["workers"]
    trainer = TorchTrainer(
        train_member,
        train_loop_config=job,
        scaling_config=train.ScalingConfig(
            num_workers=workers,
            use_gpu=job["gpus"] > 0,
            resources_per_worker={"CPU": job["cpus"] / workers, "GPU": job["gpus"] / workers},
        ),
        # One worker has no peer to talk to: gloo, not Ray Train's NCCL default for GPU workers, which
        # fails where torch sees no CUDA device (logical GPUs) and gains nothing on one GPU.
        torch_config=ray.train.torch.TorchConfig(backend="gloo") if workers == 1 else None,
        run_config=train.RunConfig(
            name=job["key"],
            storage_path=job["storage"],
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
        with staged_folder(self.models_dir / key) as staging:  # a killed copy is no model
            shutil.copy2(Path(trial.last_result["checkpoint_dir"]) / MODEL_FILE, staging / MODEL_FILE)
            (staging / TRAINING_FILE).write_text(json.dumps(trial.last_result["training"]))
        shutil.rmtree(self.storage / key)  # its epoch checkpoints, optimizer state included
        self.advance(key)

    def __getstate__(self) -> dict[str, Any]:
        return {}  # Tune pickles its callbacks with the experiment state, which a rerun never restores


def remove_orphaned_placement_groups() -> int:
    """Remove this driver's placement groups whose creating actor is dead; return how many.

    A TorchTrainer's controller creates its workers' placement group, which lives as long as the
    driver's job. When a node was lost (issue 12's benchmark), Ray Train 2.60's controllers aborted
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


def train_members(
    jobs: Sequence[dict[str, Any]],
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
        # The trial only drives its Train worker, which holds the CPUs; a bundle cannot be empty.
        tune.with_resources(train_trial, {"CPU": 0, "memory": 1 << 20}),
        param_space={"job": tune.grid_search([{**job, "storage": str(storage)} for job in jobs])},
        tune_config=tune.TuneConfig(
            max_concurrent_trials=max_concurrent,
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
    CPU), then scores batches, in bfloat16 autocast where ``precision`` is "bf16" or, by default
    ("auto"), on a GPU."""

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        model: dict[str, Any],
        checkpoints: list[str],
        shards: str,
        threads: int,
        precision: str = "auto",
    ) -> None:
        self.threads = threads
        torch.set_num_threads(threads)
        ranker = methods.get(method)()
        self.score = ranker.make_scorer(
            ranker.Params(**params), ModelConfig(**model), [Path(p) for p in checkpoints], Path(shards)
        )
        self.device = inference_device()
        self.bf16 = precision == "bf16" or (precision == "auto" and self.device.type == "cuda")

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        torch.set_num_threads(self.threads)  # a pooled worker may have run other work in between
        # Dropout draws come from torch's global RNG: seeded from the batch's rows, they do not depend
        # on what the worker process ran before (same shards, same numbers).
        torch.manual_seed(int(pd.util.hash_pandas_object(batch[["qid", "cid"]], index=False).sum()) % 2**63)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            samples = self.score(batch)
        return pd.DataFrame(
            {"qid": batch["qid"], "cid": batch["cid"], "label": batch["label"], "samples": list(samples)}
        )


@functools.lru_cache(maxsize=1)
def _pooled_scorer(spec: str) -> ShardScorer:
    """The scorer a CPU worker process keeps for its next task on the same models (``spec``: the
    JSON of ShardScorer's arguments, plus the checkpoints' stamps so rewritten weights reload)."""
    arguments = json.loads(spec)
    del arguments["stamps"]
    return ShardScorer(**arguments)


def score_batch(batch: pd.DataFrame, spec: str) -> pd.DataFrame:
    """Ray Data task: score ``batch`` with the worker's kept scorer for ``spec``."""
    return _pooled_scorer(spec)(batch)


def score_shards(
    method: str,
    params: dict[str, Any],
    model: dict[str, Any],
    checkpoints: Sequence[Path],
    shards: Path,
    batch_size: int,
    threads: int,
    gpus: float = 0.0,
    precision: str = "auto",
) -> pa.Table:
    """Predictions (contract 2) for every candidate row of ``shards``, in shard order.

    With ``gpus`` a scoring actor holds that share of a GPU. On CPUs the batches run as Ray tasks
    instead: Ray reuses a CPU worker process from task to task, and the scorer it keeps (imports,
    weights) spares each call the fresh actor's start-up, which cost 4 s, a third of a WikiQA test
    split's scoring. Ray does not reuse GPU workers (CUDA memory), so there an actor is the way.
    """
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    # Ray 2.60's DataSourceV2 Parquet read adds a ListFiles stage that cost about 1 s a call here
    # (read and an identity map of the WikiQA test shards: 1.2-1.8 s; V1's single ReadParquet: 0.35 s).
    context.use_datasource_v2 = False
    files = [str(part) for part in shard_files(shards)]
    dataset = ray.data.read_parquet(files).select_columns(["qid", "context", "cid", "text", "label"])
    scorer = {
        "method": method,
        "params": params,
        "model": model,
        "checkpoints": [str(p) for p in checkpoints],
        "shards": str(shards),
        "threads": threads,
        "precision": precision,
    }
    common: dict[str, Any] = {"batch_size": batch_size, "batch_format": "pandas", "num_cpus": 1}
    if gpus > 0:
        scored = dataset.map_batches(
            ShardScorer,
            fn_constructor_kwargs=scorer,
            compute=ray.data.ActorPoolStrategy(size=1),
            num_gpus=gpus,
            **common,
        )
    else:
        stamps = [[p.stat().st_mtime_ns, p.stat().st_size] for p in checkpoints]
        spec = json.dumps(scorer | {"stamps": stamps}, sort_keys=True)
        # One task at a time, on one CPU: leaves the others to the read tasks on a small machine.
        scored = dataset.map_batches(
            score_batch, fn_kwargs={"spec": spec}, compute=ray.data.TaskPoolStrategy(size=1), **common
        )
    try:
        scored = scored.to_pandas()
    except ray.exceptions.RayError as error:  # the scorer's own message is the last line of Ray's
        cause = [line for line in str(error).splitlines() if line.strip()][-1].strip()
        raise RankuqError(f"scoring {method} on {shards.name} failed: {cause}") from error
    samples = np.stack(scored["samples"].to_numpy())
    return frame_predictions(scored, samples, methods.get(method).probabilistic)
