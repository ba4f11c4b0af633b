"""`rankuq run --plan`'s text: what a plan runs, what is cached, and the work left in CPU-hours and
H100 hours (bench.planning.capacity's arithmetic over the plan's counted rows and members).
"""

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rankuq.bench.planning.capacity import GpuWork, Scored, gpu_seconds, members_at_once, scoring_cost
from rankuq.bench.planning.measured import CPU_FORWARD_PASSES, GPU_RECORD, value

if TYPE_CHECKING:
    from rankuq.bench.config.search_space import SearchConfig
    from rankuq.bench.planning.jobs import TrainJob
    from rankuq.bench.planning.plan import Plan


def counts(plan: "Plan") -> dict[Path, tuple[int, int]]:
    """(candidate rows, answerable queries) of every list folder of the plan: from a built folder's
    manifest, else counted on the task's pool as the lists would be cut (no negative is sampled)."""
    import json

    from rankuq import tasks
    from rankuq.contract import MANIFEST
    from rankuq.tasks.base import data_root
    from rankuq.tasks.lists import count_rows

    root = data_root(plan.spec.data_dir)
    found: dict[Path, tuple[int, int]] = {}
    for lists, folder in plan.lists.items():
        manifest = folder / MANIFEST
        if manifest.is_file():
            record = json.loads(manifest.read_text())
            found[folder] = (record["rows"], record["queries"] - record.get("nota_queries", 0))
            continue
        loader = tasks.get(lists.task)()
        strategy = lists.strategy or loader.default_strategy(lists.split)
        found[folder] = count_rows(
            loader.pool(lists.split, root), strategy, lists.n, lists.variant, lists.include_nota
        )
    return found


def trial_epochs(search: "SearchConfig", epochs: int) -> float:
    """Expected epochs of one search trial: every epoch with FIFO; with ASHA, a trial passes each rung
    (grace period × reduction factor^k below ``epochs``) with probability 1/reduction factor, the
    synchronous successive-halving fraction Ray's asynchronous ASHA approaches with many trials."""
    scheduler = search.scheduler
    if scheduler.name == "fifo":
        return float(epochs)
    rungs = [float(scheduler.grace_period)]
    while rungs[-1] * scheduler.reduction_factor < epochs:
        rungs.append(rungs[-1] * scheduler.reduction_factor)
    ends = [*rungs, float(epochs)]
    return ends[0] + sum(
        (ends[k + 1] - ends[k]) / scheduler.reduction_factor ** (k + 1) for k in range(len(ends) - 1)
    )


def _cut(search: "SearchConfig") -> str:
    scheduler = search.scheduler
    if scheduler.name == "fifo":
        return "FIFO: every trial runs every epoch"
    return (
        f"ASHA: grace period {scheduler.grace_period}, 1 in {scheduler.reduction_factor:g} trials goes on "
        "at each rung"
    )


def train_pair_epochs(job: "TrainJob", sizes: dict[Path, tuple[int, int]], epochs: float) -> float:
    """Training pairs × epochs of one member: a relevant candidate and ``negatives`` non-relevant ones
    per answerable query (≈ one relevant each), the first ``max_queries`` of them."""
    queries = sizes[Path(job.shards)][1]
    if job.train.max_queries:
        queries = min(queries, job.train.max_queries)
    return queries * (1 + job.train.negatives) * epochs


def _dev_rows(folder: str, sizes: dict[Path, tuple[int, int]]) -> int:
    """Rows of the dev lists scored after every epoch (early stopping, a search's trials); 0: none."""
    return sizes[Path(folder)][0] if folder else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def describe(plan: "Plan") -> str:
    """The plan in a few lines: what runs, what is cached, and the estimated work left."""
    spec, layout = plan.spec, plan.layout
    layers, tokens = spec.model.layers or 6, spec.model.max_length
    low, high = value("cpu_ms_per_pair_l2"), value("cpu_ms_per_pair_l6")
    cpu_ms = (low + (layers - 2) * (high - low) / 4) * tokens / 64  # linear in layers and tokens
    sizes = counts(plan)
    lines = [
        f"grid {spec.name}: {len(plan.cells)} cells ({_count(len(spec.conditions()), 'condition')} × "
        f"{_count(len(spec.methods), 'method')} × {_count(len(spec.seeds), 'seed')}), "
        f"run directory {layout.root}",
        f"candidate lists: {len(plan.lists)} folders ({sum(f.is_dir() for f in plan.lists.values())} built)",
    ]
    pending = [job for key, job in plan.members.items() if not layout.training_file(key).exists()]
    backbone = spec.model.backbone or "all-MiniLM-L6-v2 (offline)"
    cached = len(plan.members) - len(pending)
    lines.append(f"members to train: {len(plan.members)} ({cached} cached), backbone {backbone}")
    work = GpuWork(_members_left(plan, sizes, lines), [])
    by_method: dict[tuple[str, str], int] = {}
    for cell in plan.cells:
        params = plan.params[cell.method].model_dump()
        splits = [("test", plan.tested[cell.condition], cell.key)]
        splits += [("dev", plan.dev[cell.condition], cell.dev_key)] if cell.dev_key else []
        for split, folder, key in splits:
            rows = sizes[folder][0]
            by_method[cell.method, split] = by_method.get((cell.method, split), 0) + rows
            if not layout.predictions(
                cell.task, cell.method, cell.seed, str(key), dev=split == "dev"
            ).exists():
                work.scored.append(Scored(cell.method, params, rows, len(cell.members), str(folder)))
    lines.append("pairs to score (all seeds; cached ones included):")
    lines += [f"  {method:<14} {split:<5} {rows:>10,}" for (method, split), rows in by_method.items()]
    lines.append(f"probes per seed: {', '.join(plan.probes) or 'none'}")
    trained, scored = (sum(member[i] for member in work.members) for i in (0, 1))
    cpu = (trained * value("cpu_train_over_forward") + scored) * cpu_ms / 3.6e6
    cpu += (
        sum(scoring_cost(s.method, s.params, s.rows, cpu_ms, CPU_FORWARD_PASSES) for s in work.scored) / 3.6e6
    )
    at_once = members_at_once(spec.resources)
    cores = os.cpu_count() or 1
    lines.append(
        f"estimated work left: {cpu:.3g} CPU-hours (one core, fp32; about {cpu / cores:.2g} hours of wall "
        f"time on this machine's {_count(cores, 'core')} if nothing else runs) or "
        f"{gpu_seconds(spec, work) / 3600:.2g} "
        f"GPU-hours (one H100, {_count(at_once, 'member')} at once; rankuq's throughputs and fixed costs as "
        f"measured at c99ffb5). Sources: rankuq/bench/planning/measured.py COST (rankuq/records/) and "
        f"MEASURED_GPU ({GPU_RECORD})."
    )
    return "\n".join(lines)


def _members_left(
    plan: "Plan", sizes: dict[Path, tuple[int, int]], lines: list[str]
) -> list[tuple[float, float]]:
    """(training pair-epochs, dev pairs scored between epochs) of every member and search trial left
    to train; a line per search that is left is added to ``lines``."""
    from rankuq.bench.planning.plan import search_choice

    spec, layout = plan.spec, plan.layout
    members: list[tuple[float, float]] = [
        (
            train_pair_epochs(job, sizes, job.train.epochs),
            _dev_rows(job.dev_shards, sizes) * job.train.epochs,
        )
        for key, job in plan.members.items()
        if not layout.training_file(key).exists()
    ]
    for search in plan.searches:
        if search_choice(layout, search) is not None:
            continue
        assert spec.search is not None  # a plan searches only for a grid with a search section
        epochs = trial_epochs(spec.search, search.trial.job.train.epochs)
        trial = (
            train_pair_epochs(search.trial.job, sizes, epochs),
            _dev_rows(search.trial.dev_shards, sizes) * epochs,
        )
        members += [trial] * spec.search.num_samples
        lines.append(
            f"search {search.name}: {spec.search.num_samples} trials over {', '.join(search.keys)}, "
            f"{epochs:.3g} epochs each expected ({_cut(spec.search)})"
        )
    return members
