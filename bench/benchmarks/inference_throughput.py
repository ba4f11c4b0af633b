"""Inference throughput: the grid's Ray Data pipeline against a plain PyTorch loop, same model and shards.

Both score every (question, sentence) row of the real WikiQA shards of ``--split`` (NOTA questions
included) with the same method scorer (``methods.<m>.make_scorer``: one tokeniser call per batch of
``--batch-size`` rows, length-bucketed forward passes of 64) on a freshly built MiniLM cut to
``--layers`` layers, with ``--threads`` torch threads, and build the same predictions table:

- plain: read the shards with pyarrow, build the scorer, loop over the batches;
- ray: ``bench.engine.score_shards`` (Ray Data ``read_parquet`` → ``map_batches``; on CPU a task
  on a pooled worker process that keeps the scorer between calls), in a Ray session started before
  the clock (a grid starts it once).

The first call of each is timed apart (one-off costs); then each is timed ``--repeats`` times,
alternating, and the fastest run is kept; the tables must match.

    python -m bench.benchmarks.inference_throughput [--method bert] [--layers 2] [--repeats 3]
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

import methods
import tasks
from bench.engine import ray_session, score_shards
from bench.predictions import predictions_table
from methods.backbone import ModelConfig, build_cross_encoder
from tasks.shards import build_shards, shard_files


def plain_loop(
    method: str, config: ModelConfig, checkpoint: Path, shards: Path, batch_size: int, threads: int
) -> pa.Table:
    torch.set_num_threads(threads)
    ranker = methods.get(method)()
    score = ranker.make_scorer(ranker.parse({}, "benchmark"), config, [checkpoint], shards)
    frame = pq.ParquetDataset(shard_files(shards)).read().to_pandas()
    samples = np.concatenate(
        [score(frame.iloc[i : i + batch_size]) for i in range(0, len(frame), batch_size)]
    )
    probabilistic = methods.get(method).probabilistic
    return predictions_table(
        frame.qid.tolist(), frame.cid.tolist(), frame.label.to_numpy(), samples, probabilistic
    )


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
    args = parser.parse_args()
    config = ModelConfig(layers=args.layers, max_length=args.max_length)
    with tempfile.TemporaryDirectory() as folder:
        shards = build_shards("wikiqa", args.split, root=tasks.data_root(), cache_dir=Path(folder))
        checkpoint = Path(folder) / "model.pt"
        torch.save(build_cross_encoder(config, seed=0).state_dict(), checkpoint)
        tables: dict[str, pa.Table] = {}
        with ray_session():
            ray.data.DataContext.get_current().enable_progress_bars = False
            runs = {
                "plain": lambda: plain_loop(
                    args.method, config, checkpoint, shards, args.batch_size, args.threads
                ),
                "ray": lambda: score_shards(
                    args.method, {}, config.model_dump(), [checkpoint], shards, args.batch_size, args.threads
                ),
            }
            # The first call pays the one-off costs (imports, Ray Data's first execution, and for Ray the
            # start of the worker process that keeps the scorer): reported, not kept.
            first = {name: timed(run)[0] for name, run in runs.items()}
            times = {name: [] for name in runs}
            for _ in range(args.repeats):  # alternating, so both see the same machine load
                for name, run in runs.items():
                    seconds, table = timed(run)
                    times[name].append(seconds)
                    tables[name] = table
    results = {name: (min(seconds), tables[name]) for name, seconds in times.items()}
    plain, through_ray = results["plain"], results["ray"]
    pairs = plain[1].num_rows
    same = np.allclose(plain[1]["prob_mean"].to_numpy(), through_ray[1]["prob_mean"].to_numpy(), atol=1e-6)
    model = f"MiniLM-L{args.layers}, max length {args.max_length}"
    print(f"{args.method} on {model}: wikiqa/{args.split}, {pairs} pairs")
    print("  first call: " + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in first.items()))
    for name, (seconds, _) in results.items():
        print(f"  {name:5s} {seconds:7.2f} s  {pairs / seconds:8.1f} pairs/s")
    print(f"  ray / plain throughput: {plain[0] / through_ray[0]:.3f}×   (tables equal: {same})")


if __name__ == "__main__":
    main()
