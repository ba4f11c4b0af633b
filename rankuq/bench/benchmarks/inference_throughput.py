"""Inference throughput: the grid's Ray Data pipeline against a plain PyTorch loop, same model and shards.

Both score every (question, sentence) row of the real WikiQA shards of ``--split`` (NOTA questions
included) with the same method scorer (``methods.<m>.make_scorer``: one tokeniser call per batch of
``--batch-size`` rows, length-bucketed forward passes: 64 rows on a CPU, up to 1,024 on a GPU) on a
freshly built MiniLM cut to ``--layers`` layers, with ``--threads`` torch threads, and build the same
predictions table:

- plain: read the shards with pyarrow, build the scorer, loop over the batches;
- ray: ``bench.engine.scoring.score_shards`` (Ray Data ``read_parquet`` → ``map_batches``; on CPU a task
  on a pooled worker process that keeps the scorer between calls), in a Ray session started before
  the clock (a grid starts it once).

The first call of each is timed apart (one-off costs); then each is timed ``--repeats`` times,
alternating, and the fastest run is kept; the tables must match.

Both run on the GPU when there is one (the Ray path then gives its scoring actor ``--gpus`` of it)
in ``--precision`` (auto: bf16 on a GPU, its weights in bfloat16, and the Ray path's scorers read the
token ids cached beside the shards; fp32 on CPU; bf16 on a CPU is autocast). The model's FLOPs over the
shards are counted once (``torch.utils.flop_counter``), so each path's FLOP rate is also given as a
fraction of the device's matrix rate in that precision, measured here on square matmuls.

    python -m rankuq.bench.benchmarks.inference_throughput [--method bert] [--layers 2] [--precision bf16]
"""

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import ray
import torch
from torch.utils.flop_counter import FlopCounterMode

from rankuq import methods, tasks
from rankuq.backbone import ModelConfig, build_cross_encoder
from rankuq.bench.engine.scoring import ShardScorer, score_frame, score_shards
from rankuq.bench.engine.session import ray_session
from rankuq.bench.planning.jobs import ScorerSpec
from rankuq.contract import shard_files
from rankuq.methods.base import NeuralMethod, inference_device
from rankuq.tasks.shards import build_shards


def scorer_spec(
    method: str, config: ModelConfig, checkpoint: Path, shards: Path, threads: int, precision: str
) -> ScorerSpec:
    """The method with default parameters on one checkpoint, as the grid's scoring stage builds it."""
    return ScorerSpec(
        method=method,
        params={},
        model=config,
        checkpoints=(str(checkpoint),),
        shards=str(shards),
        threads=threads,
        precision=precision,
    )


def plain_loop(
    method: str,
    config: ModelConfig,
    checkpoint: Path,
    shards: Path,
    batch_size: int,
    threads: int,
    precision: str,
) -> pa.Table:
    """The method's scorer in this process (the same ShardScorer the Ray path runs), batch after batch."""
    scorer = ShardScorer(scorer_spec(method, config, checkpoint, shards, threads, precision).to_dict())
    frame = pq.ParquetDataset(shard_files(shards)).read().to_pandas()
    return score_frame(
        lambda batch: np.stack(list(scorer(batch)["samples"])),
        frame,
        batch_size,
        methods.get(method).probabilistic,
    )


def matrix_rate(
    device: torch.device, bf16: bool, threads: int, size: int = 2048, seconds: float = 2.0
) -> float:
    """FLOP/s of ``size``² matmuls on ``device`` in bfloat16 (else fp32), measured for ``seconds``."""
    torch.set_num_threads(threads)
    dtype = torch.bfloat16 if bf16 else torch.float32
    a, b = (torch.randn(size, size, device=device, dtype=dtype) for _ in range(2))
    sync: Callable[[], None] = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    a @ b  # warm-up
    sync()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        count += 1
    sync()
    return 2 * size**3 * count / (time.perf_counter() - start)


def counted_flops(run: Callable[[], pa.Table]) -> float:
    """FLOPs of one call of ``run`` (matmuls and attention, as torch's flop counter counts them)."""
    with FlopCounterMode(display=False) as counter:
        run()
    return int(counter.get_total_flops())


def timed(run: Callable[[], pa.Table]) -> tuple[float, pa.Table]:
    start = time.perf_counter()
    table = run()
    return time.perf_counter() - start, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--method", default="bert")
    parser.add_argument("--split", default="test")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precision", choices=["auto", "fp32", "bf16"], default="auto")
    parser.add_argument(
        "--gpus", type=float, default=None, help="the Ray path's GPU share (default: 1 on a GPU)"
    )
    args = parser.parse_args()
    device = inference_device()
    gpus = args.gpus if args.gpus is not None else float(device.type == "cuda")
    bf16 = args.precision == "bf16" or (args.precision == "auto" and device.type == "cuda")
    config = ModelConfig(layers=args.layers, max_length=args.max_length)
    with tempfile.TemporaryDirectory() as folder:
        shards = build_shards("wikiqa", args.split, root=tasks.data_root(), cache_dir=Path(folder))
        checkpoint = Path(folder) / "member"
        method = methods.create(args.method)
        assert isinstance(method, NeuralMethod)  # a method that scores a trained member
        method.save_member(build_cross_encoder(config, seed=0), config, checkpoint)
        tables: dict[str, pa.Table] = {}
        with ray_session():
            ray.data.DataContext.get_current().enable_progress_bars = False
            runs = {
                "plain": lambda: plain_loop(
                    args.method, config, checkpoint, shards, args.batch_size, args.threads, args.precision
                ),
                "ray": lambda: score_shards(
                    scorer_spec(args.method, config, checkpoint, shards, args.threads, args.precision),
                    args.batch_size,
                    gpus=gpus,
                ),
            }
            # The first call pays the one-off costs (imports, Ray Data's first execution, and for Ray the
            # start of the worker process that keeps the scorer): reported, not kept.
            first = {name: timed(run)[0] for name, run in runs.items()}
            times: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(args.repeats):  # alternating, so both see the same machine load
                for name, run in runs.items():
                    seconds, table = timed(run)
                    times[name].append(seconds)
                    tables[name] = table
        flops = counted_flops(runs["plain"])
    rate = matrix_rate(device, bf16, args.threads)
    results = {name: (min(seconds), tables[name]) for name, seconds in times.items()}
    plain, through_ray = results["plain"], results["ray"]
    pairs = plain[1].num_rows
    # Ray Data cuts batches at block edges: other length buckets, so bf16 rounds a little differently.
    gap = np.abs(plain[1]["prob_mean"].to_numpy() - through_ray[1]["prob_mean"].to_numpy()).max()
    same = plain[1]["qid"].equals(through_ray[1]["qid"]) and plain[1]["cid"].equals(through_ray[1]["cid"])
    model = f"MiniLM-L{args.layers}, max length {args.max_length}"
    precision = ("bf16 weights" if device.type == "cuda" else "bf16 autocast") if bf16 else "fp32"
    print(f"{args.method} on {model}, {precision} on {device.type}: wikiqa/{args.split}, {pairs} pairs")
    print(
        f"  model FLOPs {flops / 1e9:.1f} G; matrix rate of the device {rate / 1e9:.1f} GFLOP/s ({precision})"
    )
    print("  first call: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in first.items()))
    for name, (seconds, _) in results.items():
        achieved = flops / seconds
        print(
            f"  {name:5s} {seconds:7.2f} s  {pairs / seconds:8.1f} pairs/s  "
            f"{achieved / 1e9:7.1f} GFLOP/s = {achieved / rate:.1%} of the matrix rate"
        )
    print(f"  ray / plain throughput: {plain[0] / through_ray[0]:.3f}×")
    print(f"  same rows in the same order: {same}; largest prob_mean difference {gap:.1e}")


if __name__ == "__main__":
    main()
