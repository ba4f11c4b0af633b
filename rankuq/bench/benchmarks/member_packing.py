"""Packing ensemble members: M members trained at once as parallel Tune trials, each holding a share
of the same devices, against one member alone (paper 000's ensemble cost, issue 6's GPU bar).

Both train `bert` members on the real WikiQA train lists with the grid's own ``train_members``
(a Tune trial per member, each a one-worker Ray Train TorchTrainer) into empty folders, so nothing
is cached: first one member alone with ``--gpus-per-trial`` (and ``--cpus-per-trial``), then
``--members`` members with the same share each, all at once. On a GPU machine give each member
1/M of the GPU; on CPUs the members share the cores the same way.

    python -m rankuq.bench.benchmarks.member_packing --gpus-per-trial 0.2 [--members 5] [--layers 6]
"""

import argparse
import tempfile
import time
from pathlib import Path

import ray

from rankuq import tasks
from rankuq.backbone import ModelConfig
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.members import train_members
from rankuq.bench.engine.session import ray_session
from rankuq.bench.planning.jobs import TrainJob
from rankuq.bench.planning.plan import member_seed
from rankuq.tasks.shards import build_shards


def jobs(count: int, shards: Path, args: argparse.Namespace) -> list[TrainJob]:
    """Training jobs of ``count`` ensemble members, as the grid's plan writes them."""
    model = ModelConfig(layers=args.layers, max_length=args.max_length).model_dump()
    train = TrainConfig(epochs=args.epochs, max_queries=args.max_queries).model_dump()
    return [
        TrainJob(
            key=f"member-{m}",
            method="bert",
            params={},
            shards=str(shards),
            seed=member_seed(0, m),
            model=model,
            train=train,
            cpus=args.cpus_per_trial,
            gpus=args.gpus_per_trial,
            workers=1,
        )
        for m in range(count)
    ]


def timed_training(count: int, shards: Path, args: argparse.Namespace) -> float:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        train_members(jobs(count, shards, args), Path(folder) / "models", Path(folder) / "ray", count, print)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--members", type=int, default=5)
    parser.add_argument("--gpus-per-trial", type=float, default=0.0)
    parser.add_argument("--cpus-per-trial", type=float, default=1.0)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-queries", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache, ray_session():
        shards = build_shards("wikiqa", "train", root=tasks.data_root(), cache_dir=Path(cache))
        print(f"cluster: {ray.cluster_resources()}")
        alone = timed_training(1, shards, args)
        packed = timed_training(args.members, shards, args)
    share = f"{args.gpus_per_trial:g} GPU, {args.cpus_per_trial:g} CPU per member"
    print(f"MiniLM-L{args.layers}, {args.epochs} epoch(s), {share}")
    print(f"  1 member alone:        {alone:8.1f} s")
    print(
        f"  {args.members} members packed:     {packed:8.1f} s   ({packed / alone:.2f}× the wall time of one)"
    )


if __name__ == "__main__":
    main()
