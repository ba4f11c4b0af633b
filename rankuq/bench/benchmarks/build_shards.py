"""Shard-building speed: every WikiQA and ClariQ shard a shift grid can ask for, from real data.

Builds, for each task × split × strategy, the standard lists of 10 (WikiQA's native lists also
whole) and, on the test split, the imbalance lists (1 relevant + 1…9 negatives) and the NOTA
variant, three times into one cache folder:

- cold: nothing cached, every text of the dense strategy is encoded with MiniLM;
- embeddings cached: the shard folders deleted, the encoded texts kept (a new seed, n or variant);
- warm: every shard a cache hit.

The dense encoder is loaded before the clock starts. Wall and CPU seconds are printed per phase:
on a shared machine CPU seconds / cores estimates the wall time on idle cores.

    python -m rankuq.bench.benchmarks.build_shards [--data-dir DIR] [--seed S]
"""

import argparse
import logging
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from rankuq import tasks
from rankuq.tasks import negatives
from rankuq.tasks.embeddings import load_encoder
from rankuq.tasks.shards import EMBEDDINGS, build_shards

TASKS = ("wikiqa", "clariq")
IMBALANCE = range(2, 11)  # n = 1 relevant + #non-rel, #non-rel = 1 … 9


def settings(task: str) -> Iterator[dict[str, object]]:
    """Every (split, strategy, n, variant) the benchmark builds for ``task``."""
    loader = tasks.get(task)()
    for split in loader.splits:
        for strategy in negatives.names():
            if negatives.get(strategy).needs_native and split not in loader.native_splits:
                continue
            yield {"split": split, "strategy": strategy, "n": 10, "variant": "standard"}
            if strategy == "native":
                yield {"split": split, "strategy": strategy, "n": None, "variant": "standard"}
            if split == "test":
                for n in IMBALANCE:
                    yield {"split": split, "strategy": strategy, "n": n, "variant": "imbalance"}
                yield {"split": split, "strategy": strategy, "n": 10, "variant": "nota"}


def build_all(root: Path, cache: Path, seed: int) -> tuple[int, dict[str, float]]:
    """Build every shard; the count and seconds per strategy."""
    count, seconds = 0, dict.fromkeys(negatives.names(), 0.0)
    for task in TASKS:
        for spec in settings(task):
            start = time.perf_counter()
            build_shards(task, root=root, cache_dir=cache, seed=seed, **spec)  # type: ignore[arg-type]
            seconds[str(spec["strategy"])] += time.perf_counter() - start
            count += 1
    return count, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="shared data folder (default: $RANKUQ_DATA or ../shared/data)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.getLogger("rankuq.tasks.lists").setLevel(logging.ERROR)  # drop counts are expected here
    root = tasks.data_root(args.data_dir)
    start = time.perf_counter()
    load_encoder()
    print(f"encoder load: {time.perf_counter() - start:.1f} s (not counted)")
    with tempfile.TemporaryDirectory() as temp:
        cache = Path(temp)
        for phase in ("cold", "embeddings cached", "warm"):
            if phase == "embeddings cached":
                for folder in cache.iterdir():
                    if folder.name != EMBEDDINGS:
                        shutil.rmtree(folder)
            wall, cpu = time.perf_counter(), time.process_time()
            count, seconds = build_all(root, cache, args.seed)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            by_strategy = ", ".join(f"{name} {value:.1f}" for name, value in seconds.items())
            print(f"{phase}: {count} shards in {wall:.1f} s wall, {cpu:.1f} s CPU (wall s: {by_strategy})")


if __name__ == "__main__":
    main()
