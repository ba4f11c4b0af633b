"""What a grid will cost, from its plan and the per-pair costs measured in ``docs/benchmarks.md``.

``rankuq run GRID --plan`` prints ``describe(plan)``: members to train (and how many are cached),
pairs to score per method and split, the probes, and an estimate of the work in CPU-hours and
GPU-hours. Every constant below names the measurement it comes from; what is a rule of thumb says so.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from rankuq import tasks
from rankuq.bench.plan import Cell, Plan
from rankuq.shards import MANIFEST
from rankuq.tasks.base import data_root
from rankuq.tasks.lists import count_rows

# Inference on one CPU core, fp32, max length 64, `bert` on MiniLM cut to L layers (docs/benchmarks.md,
# "Methods": `python -m rankuq.bench.benchmarks.method_cost`, 1 torch thread): 5.52 ms/pair at L2,
# 16.93 ms/pair at L6; between them linear in the layers (each layer costs the same).
CPU_MS_PER_PAIR = {2: 5.52, 6: 16.93}
# FLOPs of one pair at L2, max length 64: 1,788 GFLOP over the 6,165 WikiQA test pairs, counted by
# torch's flop counter (docs/benchmarks.md, "Inference throughput"); per layer half of it.
FLOPS_PER_PAIR_L2 = 1788e9 / 6165
# Each method's cost in `bert` forward passes per pair (docs/benchmarks.md, "Methods", L2 column):
# mc_dropout 19.50× at T = 10, ensemble 5.26× at M = 5, last_layer_mc 1.13× at T = 100, the GP
# heads 0.99–1.01×, conv_knrm 0.41×. BM25 is negligible next to them (a few ms per query).
PER_DRAW = {"mc_dropout": 19.50 / 10, "ensemble": 5.26 / 5}
FIXED = {"last_layer_mc": 1.13, "conv_knrm": 0.41, "bm25": 0.0}
# Training one pair for one epoch costs about five forward passes: the default grid (README,
# "Benchmark") trained 6 members × 2 epochs × ≈2,080 WikiQA pairs in 5 min 49 s on 2 cores, 698 CPU-s
# for ≈25k pair-epochs, 28 ms each against 5.52 ms for one forward pass (backward, optimizer, padding).
TRAIN_PASSES = 5.0
# A GPU's share of its bf16 dense peak that small cross-encoders at short lengths reach: assumed, not
# measured (no GPU was lent to this project); H100 SXM bf16 dense peak 989 TFLOP/s (NVIDIA's sheet).
GPU_PEAK_FLOPS, GPU_UTILISATION = 989e12, 0.25


@dataclass(frozen=True)
class Work:
    """Forward-pass equivalents of ``bert`` (pairs × passes) and what they cost."""

    passes: float  # bert forward passes over one pair each
    layers: int
    max_length: int

    @property
    def cpu_hours(self) -> float:
        low, high = CPU_MS_PER_PAIR[2], CPU_MS_PER_PAIR[6]
        ms = low + (self.layers - 2) * (high - low) / 4
        return self.passes * ms * self.max_length / 64 / 3.6e6

    @property
    def gpu_hours(self) -> float:
        flops = FLOPS_PER_PAIR_L2 * self.layers / 2 * self.max_length / 64
        return self.passes * flops / (GPU_PEAK_FLOPS * GPU_UTILISATION) / 3600


def method_passes(plan: Plan, cell: Cell) -> float:
    """Forward passes of `bert` one scored pair of ``cell``'s method costs."""
    params = plan.params[cell.method].model_dump()
    if cell.method in PER_DRAW:
        return PER_DRAW[cell.method] * params.get("T", params.get("M", 1))
    return FIXED.get(cell.method, 1.0)


def counts(plan: Plan) -> dict[Path, tuple[int, int]]:
    """(candidate rows, answerable queries) of every list folder of the plan: from a built folder's
    manifest, else counted on the task's pool as the lists would be cut (no negative is sampled)."""
    root = data_root(plan.spec.data_dir)
    found = {}
    for lists, folder in plan.lists.items():
        manifest = folder / MANIFEST
        if manifest.is_file():
            record = json.loads(manifest.read_text())
            found[folder] = (record["rows"], record["queries"] - record.get("nota_queries", 0))
            continue
        loader = tasks.get(lists.task)()
        pool = loader.pool(lists.split, root)
        strategy = lists.strategy or loader.default_strategy(lists.split)
        found[folder] = count_rows(pool, strategy, lists.n, lists.variant, lists.include_nota)
    return found


def describe(plan: Plan) -> str:
    """The plan in a few lines: what runs, what is cached, and the estimated work."""
    spec, layout = plan.spec, plan.layout
    model = spec.model
    layers = model.layers or 6
    lines = [
        f"grid {spec.name}: {len(plan.cells)} cells ({len(spec.conditions())} conditions × "
        f"{len(spec.methods)} methods × {len(spec.seeds)} seeds), run directory {layout.root}"
    ]
    unbuilt = [folder.name for folder in plan.lists.values() if not folder.is_dir()]
    sizes = counts(plan)
    lines.append(f"candidate lists: {len(plan.lists)} folders ({len(plan.lists) - len(unbuilt)} built)")
    for job in plan.searches:
        lines.append(f"search {job.name}: {spec.search.num_samples} trials over {', '.join(job.keys)}")
    cached = sum(layout.model_file(key).exists() for key in plan.members)
    training = 0.0
    for job in plan.members.values():
        if layout.model_file(job.key).exists():
            continue
        _, queries = sizes[Path(job.shards)]
        pairs = 2 * queries  # a relevant candidate and one negative per answerable query (≈)
        if job.train.get("max_queries"):
            pairs = min(pairs, 2 * job.train["max_queries"])
        training += pairs * job.train["epochs"] * TRAIN_PASSES
    lines.append(f"members to train: {len(plan.members)} ({cached} cached)")
    scoring = 0.0
    by_method: dict[tuple[str, str], int] = {}
    for cell in plan.cells:
        splits = [("test", plan.tested[cell.condition], cell.key)]
        if cell.dev_key:
            splits.append(("dev", plan.dev[cell.condition], cell.dev_key))
        for split, folder, key in splits:
            count, _ = sizes[folder]
            by_method[cell.method, split] = by_method.get((cell.method, split), 0) + count
            if not layout.predictions(cell.task, cell.method, cell.seed, key, dev=split == "dev").exists():
                scoring += count * method_passes(plan, cell)
    lines.append("pairs to score (all seeds; cached ones included):")
    for (method, split), count in by_method.items():
        lines.append(f"  {method:<14} {split:<5} {count:>10,}")
    lines.append(f"probes per seed: {', '.join(plan.probes) or 'none'}")
    work = [Work(training, layers, model.max_length), Work(scoring, layers, model.max_length)]
    cpu, gpu = sum(w.cpu_hours for w in work), sum(w.gpu_hours for w in work)
    lines.append(
        f"estimated work left: {cpu:.3g} CPU-hours (one core, fp32) or {gpu:.2g} GPU-hours (H100 bf16 at "
        f"{GPU_UTILISATION:.0%} of peak); training {work[0].cpu_hours:.3g}, scoring {work[1].cpu_hours:.3g} "
        "CPU-hours. Sources: bench/cost.py (docs/benchmarks.md figures, MiniLM at max length 64)."
    )
    return "\n".join(lines)
