"""Scoring with Ray Data: ``map_batches`` with a stateful scorer over the Parquet shards, and the dev
metric that training and searches report."""

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import ray
import ray.train.torch
import torch
from torch import nn

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench import metrics as bench_metrics
from rankuq.bench.engine.tokens import ensure_token_ids, read_token_ids
from rankuq.bench.planning.jobs import ScorerSpec
from rankuq.bench.predictions import frame_predictions, join_scores
from rankuq.contract import read_shards, shard_files
from rankuq.errors import RankuqError
from rankuq.methods.base import BatchScorer, NeuralMethod, inference_device

# The candidate columns a scorer reads (contract 1 without task, split, ns and nota).
SCORED_COLUMNS = ["qid", "context", "cid", "text", "label"]


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


class ShardScorer:
    """Stateful Ray Data scorer: loads the method's models once (on the GPU it was given, else the
    CPU), then scores batches in bfloat16 where the spec's precision is "bf16" or, by default
    ("auto"), on a GPU: on a GPU the weights themselves in bfloat16 (limit.json: 136k pairs/s against
    101k under autocast, H100), on a CPU under autocast (the numbers its bf16 grids recorded)."""

    def __init__(self, spec: dict[str, object]) -> None:
        scorer = ScorerSpec.from_dict(spec)
        self.threads = scorer.threads
        torch.set_num_threads(scorer.threads)
        ranker = methods.create(scorer.method, scorer.params)
        self.device = inference_device()
        bf16 = scorer.precision == "bf16" or (scorer.precision == "auto" and self.device.type == "cuda")
        half = bf16 and self.device.type == "cuda" and isinstance(ranker, NeuralMethod)
        built = (scorer.model, [Path(p) for p in scorer.checkpoints], Path(scorer.shards))
        if isinstance(ranker, NeuralMethod) and half:
            self.score = ranker.make_scorer(*built, scorer.fitted, torch.bfloat16)
        else:
            self.score = ranker.make_scorer(*built, scorer.fitted)
        self.autocast = bf16 and not half

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        torch.set_num_threads(self.threads)  # a pooled worker may have run other work in between
        # Dropout draws come from torch's global RNG: seeded from the batch's rows, they do not depend
        # on what the worker process ran before (same shards, same numbers).
        torch.manual_seed(int(pd.util.hash_pandas_object(batch[["qid", "cid"]], index=False).sum()) % 2**63)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.autocast):
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
    frame: pd.DataFrame = pq.read_table(path, columns=SCORED_COLUMNS).to_pandas()
    return frame


def read_segments(batch: pd.DataFrame) -> pd.DataFrame:
    """The candidate rows of the batch described by ``batch``'s one row (its JSON ``segments``), with
    their cached token ids where it names a token folder (``tokens``)."""
    (segments,) = batch["segments"]
    return read_rows(json.loads(segments), batch["tokens"].iloc[0] if "tokens" in batch else "")


def read_rows(segments: Sequence[Segment], folder: str) -> pd.DataFrame:
    """The candidate rows of one batch's ``segments``, with their token ids from ``folder`` (if any)."""
    frame = pd.concat([_part(path).iloc[first:end] for path, first, end in segments], ignore_index=True)
    if not folder:
        return frame
    ids = [read_token_ids(folder, path).iloc[first:end] for path, first, end in segments]
    return pd.concat([frame, pd.concat(ids, ignore_index=True)], axis=1)


class CellScorer:
    """Ray Data's actor of a run's one scoring pass (``score_cells``): each row it is handed is a
    whole (cell, split), its ScorerSpec and its batches (``batch_segments``), scored in order as a
    ``PartScorer`` scores them one by one (the same batches, seeds and numbers). The actor, its
    imports and its device outlive the cell; a cell's models are loaded once, where it is scored."""

    def __init__(self) -> None:
        self.kept: dict[str, ShardScorer] = {}  # the scorer of the last cell, by its spec's JSON

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        (job,) = batch.to_dict("records")
        if job["spec"] not in self.kept:
            self.kept.clear()  # the last cell's models go before the next cell's are loaded
            self.kept[job["spec"]] = ShardScorer(json.loads(job["spec"]))
        scorer = self.kept[job["spec"]]
        scored = [scorer(read_rows(segments, job["tokens"])) for segments in json.loads(job["batches"])]
        return pd.concat(scored, ignore_index=True).assign(job=job["job"])


def token_ids(spec: ScorerSpec, wanted: bool) -> str:
    """The token-id folder the scorers of ``spec`` read (made where missing), or "" (they tokenise):
    only where ``wanted`` and the method is a neural one."""
    if not wanted or not issubclass(methods.get(spec.method), NeuralMethod):
        return ""
    cpus = int(ray.available_resources().get("CPU", 1))
    folder = ensure_token_ids(Path(spec.shards), spec.model, workers=max(1, cpus))
    return str(folder or "")


def score_shards(
    spec: ScorerSpec,
    batch_size: int,
    gpus: float = 0.0,
    on_rows: Callable[[int], None] | None = None,
    scorers: int = 1,
    tokens: bool | None = None,
) -> pa.Table:
    """Predictions (contract 2) for every candidate row of ``spec.shards``, in shard order.

    The dataset is the list of batches (``batch_segments``); its scorers read their rows from the
    shards, which every node sees. With ``gpus`` up to ``scorers`` scoring actors, each holding that
    share of a GPU and ``spec.threads`` CPUs, take the batches in turn. On CPUs the batches run as up
    to ``scorers`` Ray tasks at a time instead: Ray reuses a CPU worker process from task to task, and
    the scorer it keeps (imports, weights) spares each call the fresh actor's start-up, which cost 4
    s, a third of a WikiQA test split's scoring. Ray does not reuse GPU workers (CUDA memory), so
    there an actor is the way. ``on_rows`` hears of every scored batch (its row count), in order, for
    a progress bar. With ``tokens`` (by default where a GPU scores) a neural method's scorers read the
    token ids cached beside the shards (``bench.engine.tokens``: tokenised once per list, by Ray Data
    CPU tasks) instead of running the tokeniser, which one process runs at a twentieth of an H100's
    scoring rate; the same ids, the same numbers.
    """
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    shards = Path(spec.shards)
    batches = batch_segments(shard_files(shards), batch_size)
    folder = token_ids(spec, gpus > 0 if tokens is None else tokens)
    # One batch per block, so that each task or actor call gets exactly one.
    dataset = ray.data.from_items(
        [{"segments": json.dumps(segments), "tokens": folder} for segments in batches],
        override_num_blocks=len(batches),
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
        # Up to ``scorers`` tasks at a time, each on one CPU with ``spec.threads`` torch threads: on two
        # cores, two one-thread tasks scored MC dropout 4–8 % faster than one two-thread task
        # (rankuq/records/2026-11-26-cpu-scoring-both-cores.json).
        scored = dataset.map_batches(
            score_batch,  # type: ignore[arg-type]  # Ray's type for fn leaves out the fn_kwargs
            fn_kwargs={"spec": spec.to_json(), "stamps": stamps},
            compute=ray.data.TaskPoolStrategy(size=max(1, min(scorers, len(batches)))),
            num_cpus=1,
            **common,
        )
    try:
        frames = []
        for frame in scored.iter_batches(batch_size=None, batch_format="pandas"):
            frames.append(frame)
            if on_rows:
                on_rows(len(frame))
    except ray.exceptions.RayError as error:
        raise RankuqError(f"scoring {spec.method} on {shards.name} failed: {_cause(error)}") from error
    return _scored_table(pd.concat(frames, ignore_index=True), spec.method)


def _cause(error: ray.exceptions.RayError) -> str:
    """The scorer's own message: the last line of Ray's."""
    return [line for line in str(error).splitlines() if line.strip()][-1].strip()


def _scored_table(scored: pd.DataFrame, method: str) -> pa.Table:
    """Contract 2's table of a scorer's frames (qid, cid, label, samples, maybe prob_mean)."""
    samples = np.stack(scored["samples"].to_list())
    mean = scored["prob_mean"].to_numpy() if "prob_mean" in scored.columns else None
    return frame_predictions(scored, samples, methods.get(method).probabilistic, mean)


def score_cells(
    specs: Sequence[ScorerSpec], batch_size: int, gpus: float, scorers: int, tokens: bool = True
) -> Iterator[pa.Table]:
    """Predictions of every spec's lists, in the order of ``specs``, each as soon as it and those
    before it are scored: one Ray Data pass for all of them, one actor pool for the run.

    Each (cell, split) is one item, scored whole by one of up to ``scorers`` ``CellScorer`` actors
    (each ``gpus`` of a GPU and ``spec.threads`` CPUs): an actor's process start, imports and CUDA
    context are paid once per actor, not once per cell as ``score_shards`` pays them (18 s a cell on
    the H100, 2026-11-27: docs/gpu.md), and the cells run side by side. The batches are
    ``score_shards``' (``batch_segments``), scored in order with the same seeds: the same tables.
    Where ``tokens``, a neural method's scorers read the token ids cached beside the shards."""
    if not specs:
        return
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    items = [
        {
            "job": index,
            "spec": spec.to_json(),
            "tokens": token_ids(spec, tokens),
            "batches": json.dumps(batch_segments(shard_files(Path(spec.shards)), batch_size)),
        }
        for index, spec in enumerate(specs)
    ]
    scored = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
        CellScorer,
        compute=ray.data.ActorPoolStrategy(size=max(1, min(scorers, len(items)))),
        num_gpus=gpus,
        num_cpus=specs[0].threads,
        batch_size=1,
        batch_format="pandas",
    )
    try:
        frames = cast(Iterable[pd.DataFrame], scored.iter_batches(batch_size=None, batch_format="pandas"))
        for job, frame in _by_job(frames):
            yield _scored_table(frame.drop(columns="job"), specs[job].method)
    except ray.exceptions.RayError as error:
        raise RankuqError(f"scoring failed: {_cause(error)}") from error


def _by_job(frames: Iterable[pd.DataFrame]) -> Iterator[tuple[int, pd.DataFrame]]:
    """Each job's rows, whole, in order: Ray Data may cut or join the actors' output blocks."""
    pending: list[pd.DataFrame] = []
    for frame in frames:
        for job, rows in frame.groupby("job", sort=False):
            if pending and pending[0]["job"].iloc[0] != job:
                yield int(pending[0]["job"].iloc[0]), pd.concat(pending, ignore_index=True)
                pending = []
            pending.append(rows)
    if pending:
        yield int(pending[0]["job"].iloc[0]), pd.concat(pending, ignore_index=True)
