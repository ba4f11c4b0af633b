"""CPU scoring: one Ray task with every core's torch threads against one one-thread task per core.

Scores the shards ``--shards`` (a run directory's cache folder, e.g. paper_runs/paper000/cache/wikiqa-test-…)
with ``--method`` on the member ``--member`` (a run directory's models/<key>), through
``bench.engine.scoring.score_shards``, in a Ray session of ``--cpus`` CPUs started before the clock,
alternating the two configurations for ``--rounds`` rounds; checks that each gives the same table every
round and prints the largest difference between them (another thread count sums in another order).

    python -m rankuq.bench.benchmarks.cpu_scorers --member paper_runs/paper000/models/<key> \\
        --shards paper_runs/paper000/cache/wikiqa-test-<key> [--method mc_dropout --params '{"T": 10}']
"""

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import ray

from rankuq.backbone import ModelConfig
from rankuq.bench.engine.scoring import score_shards
from rankuq.bench.planning.jobs import ScorerSpec


def _samples(table: pa.Table) -> np.ndarray:
    return np.stack(table["samples"].to_numpy(zero_copy_only=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--member", type=Path, required=True)
    parser.add_argument("--shards", type=Path, required=True)
    parser.add_argument("--method", default="mc_dropout")
    parser.add_argument("--params", default='{"T": 10}', help="the method's parameters, JSON")
    parser.add_argument("--max-length", type=int, default=40, help="the grid's model.max_length")
    parser.add_argument("--batch-size", type=int, default=512, help="the grid's eval.batch_size")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    model = ModelConfig(max_length=args.max_length)
    configurations = {"one task, all threads": (args.cpus, 1), "one-thread tasks": (1, args.cpus)}
    tables: dict[str, pa.Table] = {}
    for round_ in range(args.rounds):
        for name, (threads, scorers) in configurations.items():
            spec = ScorerSpec(
                method=args.method,
                params=json.loads(args.params),
                model=model,
                checkpoints=(str(args.member),),
                shards=str(args.shards),
                threads=threads,
                precision="fp32",
            )
            start = time.perf_counter()
            table = score_shards(spec, args.batch_size, scorers=scorers)
            took = time.perf_counter() - start
            same = "" if name not in tables else f", same table as round 0: {tables[name].equals(table)}"
            tables.setdefault(name, table)
            print(
                f"round {round_}, {name} ({threads} threads × {scorers} tasks): "
                f"{table.num_rows} rows in {took:.1f} s{same}"
            )
    first, second = tables.values()
    print(f"largest difference between the two: {np.abs(_samples(first) - _samples(second)).max():.2g}")


if __name__ == "__main__":
    main()
