"""Per-pair cost constants for capacity plans (docs/scale.md, `rankuq run --plan`), each with its
source, and the arithmetic that turns a grid's pairs into GPU hours.

A plan is arithmetic, not a measurement: FLOPs are counted on the model, the GPU rate is the
vendor's peak times an assumed utilisation (stated in every estimate), nothing here ran on a GPU.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rankuq.bench.config.search_space import SearchConfig
    from rankuq.bench.planning.jobs import TrainJob
    from rankuq.bench.planning.plan import Plan

# Every figure with where it comes from.
COST: dict[str, dict[str, float | str]] = {
    "gflop_per_token_layer": {
        "value": 3.539e-3,
        "source": "torch.utils.flop_counter on the MiniLM cross-encoder (hidden 384, FFN 1536, 2-way "
        "head), forward, rows of full length: L2 × 64 tokens 0.453 GFLOP/pair, L6 × 256 tokens 5.436 "
        "(linear in layers × tokens; attention adds < 1 % at ≤ 256 tokens)",
    },
    "measured_gflop_per_pair_l2_wikiqa": {
        "value": 1788 / 6165,
        "source": "docs/benchmarks.md, inference throughput: 1,788 GFLOP over the 6,165 WikiQA test "
        "pairs, MiniLM-L2, max length 64, length-bucketed (mean ≈ 41 tokens: 64% of the full-length count)",
    },
    "train_over_forward": {
        "value": 3.0,
        "source": "backward ≈ 2 × forward for dense layers (the usual 6N vs 2N FLOPs per token)",
    },
    "params_minilm_l2_m": {
        "value": 15.62,
        "source": "docs/benchmarks.md, method cost table (bert, MiniLM-L2): 15.62 M trainable",
    },
    "params_minilm_l6_m": {
        "value": 22.71,
        "source": "docs/benchmarks.md, method cost table (bert, MiniLM-L6): 22.71 M trainable",
    },
    "train_bytes_per_param": {
        "value": 16.0,
        "source": "AdamW in fp32: weights 4 + gradients 4 + two moments 8 bytes",
    },
    "activation_bytes_per_token_layer": {
        "value": 384 * 34.0,
        "source": "≈ 34 · hidden bytes per token per layer kept for backward in fp32 mixed "
        "(Korthikanti et al. 2022, without the attention-score term), hidden 384",
    },
    "h100_bf16_dense_tflops": {
        "value": 989.0,
        "source": "NVIDIA H100 SXM5 datasheet: 989 TFLOP/s bf16 dense (1,979 with sparsity)",
    },
    "h100_memory_gb": {"value": 80.0, "source": "NVIDIA H100 SXM5 datasheet: 80 GB HBM3"},
    "utilisation": {
        "value": 0.30,
        "source": "assumed, not measured here: a 384-wide encoder's GEMMs ([B·L, 384] × [384, 1536]) "
        "reach a fraction of peak; this machine's CPU path reached 68-77 % of its own matmul rate "
        "(docs/benchmarks.md), small-hidden models on GPUs far less",
    },
}


# A count per pair or per seed: a number, or a function of the method's parameters (T, M).
PerMethod = float | Callable[[dict[str, float]], float]


def value(name: str) -> float:
    return float(COST[name]["value"])


# Forward passes of the encoder per scored pair, relative to `bert` (S = 1), on a GPU. Measured CPU
# ratios (docs/benchmarks.md, MiniLM-L6) where the draws are cheap heads; T or M where each draw is a
# whole pass (paper 003/004 measured 9.7× for T = 10 on GPUs; the CPU's 17× is mask drawing).
FORWARD_PASSES: dict[str, PerMethod] = {
    "bm25": 0.0,
    "bert": 1.0,
    "mc_dropout": lambda p: p.get("T", 10),
    "ensemble": lambda p: p.get("M", 5),
    "last_layer_mc": 1.03,
    "sngp": 1.00,
    "gpf": 1.00,
    "pg_gp": 1.00,
    "conv_knrm": 0.12,
    "temperature": 1.0,  # bert's model again, dev logits besides
    "platt": 1.0,
    "isotonic": 1.0,
}
# Models a method trains beyond those of `bert` (mc_dropout and the post-hoc maps reuse bert's; the
# ensemble's member 0 is bert's model).
EXTRA_MEMBERS: dict[str, PerMethod] = {
    "bm25": 0,
    "bert": 1,
    "mc_dropout": 0,
    "ensemble": lambda p: p.get("M", 5) - 1,
    "last_layer_mc": 1,
    "sngp": 1,
    "gpf": 1,
    "pg_gp": 1,
    "conv_knrm": 1,
    "temperature": 0,
    "platt": 0,
    "isotonic": 0,
}


def _resolve(entry: PerMethod, params: dict[str, float]) -> float:
    return float(entry(params) if callable(entry) else entry)


def passes_per_pair(
    method: str, params: dict[str, float], table: dict[str, PerMethod] = FORWARD_PASSES
) -> float:
    """Encoder passes per scored pair of ``method`` (``table``: on a GPU, or ``CPU_FORWARD_PASSES``);
    a method the table does not list (a plugin's) is counted as `bert`, one pass."""
    return _resolve(table.get(method, 1.0), params)


def scoring_cost(
    method: str,
    params: dict[str, float],
    pairs: float,
    per_pass: float,
    table: dict[str, PerMethod] = FORWARD_PASSES,
) -> float:
    """The cost of scoring ``pairs`` pairs with ``method``: pairs × passes per pair × ``per_pass``
    (GFLOP, CPU ms or GPU seconds of one pass: the result is in the same unit)."""
    return pairs * passes_per_pair(method, params, table) * per_pass


def forward_gflop(layers: int, tokens: int) -> float:
    """GFLOP of one forward pass of one (query, candidate) pair of ``tokens`` tokens."""
    return value("gflop_per_token_layer") * layers * tokens


@dataclass(frozen=True)
class Estimate:
    method: str
    pairs: float  # scored (query, candidate) pairs, every seed
    passes: float  # encoder passes per pair
    score_pflop: float
    train_pflop: float
    members: float  # trained models, every seed

    def hours(self, gpus: int, utilisation: float | None = None) -> float:
        """Wall hours on ``gpus`` H100s at ``utilisation`` of the bf16 dense peak, work spread evenly."""
        rate = value("h100_bf16_dense_tflops") * 1e12 * (utilisation or value("utilisation")) * gpus
        return (self.score_pflop + self.train_pflop) * 1e15 / rate / 3600


def estimate(
    method: str,
    params: dict[str, float],
    scored_pairs: float,
    train_pairs: float,
    epochs: int,
    layers: int,
    tokens: int,
    seeds: int,
) -> Estimate:
    """Scoring and training FLOPs of ``method`` over ``seeds`` seeds: ``scored_pairs`` per seed (test
    and dev lists), ``train_pairs`` per member and epoch."""
    members = _resolve(EXTRA_MEMBERS[method], params) * seeds
    per_pair = forward_gflop(layers, tokens)
    score = scoring_cost(method, params, scored_pairs * seeds, per_pair) / 1e6
    train = members * train_pairs * epochs * per_pair * value("train_over_forward") / 1e6
    passes = passes_per_pair(method, params)
    return Estimate(method, scored_pairs * seeds, passes, score, train, members)


def member_memory_gb(layers: int, tokens: int, batch: int, train: bool) -> float:
    """GPU memory of one member: weights (+ optimizer state and activations when training)."""
    per_layer = (value("params_minilm_l6_m") - value("params_minilm_l2_m")) / 4
    params = (value("params_minilm_l2_m") + (layers - 2) * per_layer) * 1e6  # embeddings: 12 M of them
    if not train:
        return params * 2 / 1e9 + batch * tokens * 384 * 2 * 4 / 1e9  # bf16 weights, a few live activations
    activations = batch * tokens * layers * value("activation_bytes_per_token_layer")
    return (params * value("train_bytes_per_param") + activations) / 1e9


# --- `rankuq run --plan`: the plan's work in CPU-hours (measured here) and H100 hours (arithmetic) ---

COST |= {
    "cpu_ms_per_pair_l2": {
        "value": 5.52,
        "source": "docs/benchmarks.md, method cost: bert on MiniLM-L2, max length 64, 1 CPU thread, fp32",
    },
    "cpu_ms_per_pair_l6": {"value": 16.93, "source": "the same table, MiniLM-L6"},
    "cpu_train_over_forward": {
        "value": 5.0,
        "source": "README default grid (2026-11-21): 6 members × 2 epochs × ≈2,080 WikiQA pairs trained in "
        "5 min 49 s on 2 cores, 698 CPU-s / ≈25k pair-epochs = 28 ms, 5.0 × the 5.52 ms forward",
    },
}
# On a CPU a draw of mc_dropout costs more than a pass (its masks, attention without SDPA's fused
# kernel): docs/benchmarks.md, "MC dropout's cost", 16-bit masks, L2: 11.62× bert at T = 10 (L6:
# 11.32×; 2026-11-25, --repeats 4); the ensemble 5.26× at M = 5 ("Method cost").
CPU_FORWARD_PASSES: dict[str, PerMethod] = {
    **FORWARD_PASSES,
    "mc_dropout": lambda p: 1.162 * p.get("T", 10),
    "ensemble": lambda p: 1.052 * p.get("M", 5),
    "last_layer_mc": 1.13,
    "conv_knrm": 0.41,
}


def counts(plan: "Plan") -> dict[Path, tuple[int, int]]:
    """(candidate rows, answerable queries) of every list folder of the plan: from a built folder's
    manifest, else counted on the task's pool as the lists would be cut (no negative is sampled)."""
    import json

    from rankuq import tasks
    from rankuq.shards import MANIFEST
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
    if job.train.get("max_queries"):
        queries = min(queries, job.train["max_queries"])
    return queries * (1 + job.train.get("negatives", 1)) * epochs


def _dev_rows(folder: str, sizes: dict[Path, tuple[int, int]]) -> int:
    """Rows of the dev lists scored after every epoch (early stopping, a search's trials); 0: none."""
    return sizes[Path(folder)][0] if folder else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def describe(plan: "Plan") -> str:
    """The plan in a few lines: what runs, what is cached, and the estimated work left."""
    from rankuq.bench.planning.plan import search_choice

    spec, layout = plan.spec, plan.layout
    layers, tokens = spec.model.layers or 6, spec.model.max_length
    low, high = value("cpu_ms_per_pair_l2"), value("cpu_ms_per_pair_l6")
    cpu_ms = (low + (layers - 2) * (high - low) / 4) * tokens / 64  # linear in layers and tokens
    gpu_s = (
        forward_gflop(layers, tokens) * 1e9 / (value("h100_bf16_dense_tflops") * 1e12 * value("utilisation"))
    )
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
    trained, scored = 0.0, 0.0  # training pair-epochs, and dev pairs scored between epochs
    for job in pending:
        trained += train_pair_epochs(job, sizes, job.train["epochs"])
        scored += _dev_rows(job.dev_shards, sizes) * job.train["epochs"]
    for search in plan.searches:
        if search_choice(layout, search) is not None:
            continue
        assert spec.search is not None  # a plan searches only for a grid with a search section
        epochs = trial_epochs(spec.search, search.trial.job.train["epochs"])
        trained += spec.search.num_samples * train_pair_epochs(search.trial.job, sizes, epochs)
        scored += spec.search.num_samples * _dev_rows(search.trial.dev_shards, sizes) * epochs
        lines.append(
            f"search {search.name}: {spec.search.num_samples} trials over {', '.join(search.keys)}, "
            f"{epochs:.3g} epochs each expected ({_cut(spec.search)})"
        )
    cpu = (trained * value("cpu_train_over_forward") + scored) * cpu_ms / 3.6e6
    gpu = (trained * value("train_over_forward") + scored) * gpu_s / 3600
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
                cpu += scoring_cost(cell.method, params, rows, cpu_ms, CPU_FORWARD_PASSES) / 3.6e6
                gpu += scoring_cost(cell.method, params, rows, gpu_s) / 3600
    lines.append("pairs to score (all seeds; cached ones included):")
    lines += [f"  {method:<14} {split:<5} {rows:>10,}" for (method, split), rows in by_method.items()]
    lines.append(f"probes per seed: {', '.join(plan.probes) or 'none'}")
    lines.append(
        f"estimated work left: {cpu:.3g} CPU-hours (one core, fp32) or {gpu:.2g} GPU-hours (H100 bf16 at "
        f"{value('utilisation'):.0%} of peak, assumed). Sources: bench/planning/capacity.py COST "
        "(docs/benchmarks.md)."
    )
    return "\n".join(lines)
