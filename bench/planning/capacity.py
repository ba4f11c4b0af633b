"""Per-pair cost constants for capacity plans (docs/scale.md, `rankuq run --plan`), each with its
source, and the arithmetic that turns a grid's pairs into CPU and GPU hours.

`--plan`'s GPU-hours come from what rankuq measured on a real H100 (``MEASURED_GPU``, from
docs/gpu/h100-2026-11-27.json): training and scoring throughputs and the fixed costs of a run, a
wave of members and the run's one scoring pass, with what a scored (cell, split) adds to it
(``SCORING_PER_SPLIT``, measured on a CPU or assumed, each said). The FLOP arithmetic below
(``estimate``, peak × an assumed utilisation) is the on-paper plan of docs/scale.md; it was 99× too
low against that run.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rankuq.bench.config.grid import GridSpec, ResourcesConfig
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


# --- `rankuq run --plan` on a GPU: what rankuq measured on one, not FLOPs ---

GPU_RECORD = "docs/gpu/h100-2026-11-27.json"
# The figures of GPU_RECORD the GPU plan is made of, as the record has them (a test checks them
# against the committed file): rankuq at c99ffb5 on one H100 80GB, MiniLM-L6 at max length 128,
# members trained in bf16 autocast at batch 32, scoring at batch 64. The run timed there is the
# packing benchmark's WikiQA grid, once with one `bert` member ("alone") and once with a 5-member
# ensemble at gpus_per_trial 0.2 ("packed"), one seed, no dev split, no probes.
MEASURED_GPU: dict[str, Any] = {
    "alone_train_s": 29.7,  # packing.alone_train_s: the member's model on the GPU → its last report
    "packed_over_alone": 1.024,  # packing.packed_over_alone: five members at once, each this much slower
    "members_packed": 5,  # packing.members
    "run_wall_s": {"alone": 73.41, "packed": 71.33},  # packing.run_wall_s: the whole `run_grid`
    # throughput.by_precision.<precision>.<label>.pairs_per_s: scoring 2,048 WikiQA test pairs
    "scoring_pairs_per_s": {
        "bf16": {
            "bert": 14958.3,
            "mc_dropout (T=10)": 1023.3,
            "ensemble (M=5)": 2760.2,
            "last_layer_mc (T=100)": 13664.3,
            "sngp": 5581.7,
            "gpf": 5250.0,
            "pg_gp": 11415.6,
        },
        "fp32": {
            "bert": 13922.6,
            "mc_dropout (T=10)": 994.0,
            "ensemble (M=5)": 2708.1,
            "last_layer_mc (T=100)": 13238.6,
            "sngp": 6378.2,
            "gpf": 5733.2,
            "pg_gp": 10640.0,
        },
    },
}
# Not in the JSON: the two runs' stages as their progress bars timed them, in whole seconds
# (docs/gpu/h100-2026-11-27-stderr.log, the same call: "training members … 0:00:49", "scoring cells
# … 0:00:19"; 47 and 18 s packed), and what the plan counts of the measured grid (873 answerable
# WikiQA training queries × (1 + 4 negatives), 1 epoch; 2,351 tested rows, packing.plan's text).
MEASURED_STAGES_S = {"alone": {"training": 49, "scoring": 19}, "packed": {"training": 47, "scoring": 18}}
MEASURED_TRAIN_PAIRS, MEASURED_TESTED_ROWS = 4365, 2351
MEASURED_LAYERS, MEASURED_MAX_LENGTH = 6, 128


def _scored_s(run: str) -> float:
    """Seconds of pure scoring in ``run``: its tested rows at the measured bf16 rate of its method."""
    label = "bert" if run == "alone" else "ensemble (M=5)"
    return MEASURED_TESTED_ROWS / MEASURED_GPU["scoring_pairs_per_s"]["bf16"][label]


def _runs_mean(cost: Callable[[str], float]) -> float:
    return (cost("alone") + cost("packed")) / 2


def _member_span_s(run: str) -> float:
    return float(MEASURED_GPU["alone_train_s"] * (1 if run == "alone" else MEASURED_GPU["packed_over_alone"]))


# The derived costs, each the mean of the two runs (they agree within 3 s):
GPU_COST: dict[str, float] = {
    # 4,365 pairs in 29.7 s: 147 pairs/s, bound by per-step overheads (the plain loop of limit.json
    # scores 136k pairs/s), so a smaller model is not counted faster (``gpu_slowdown``)
    "train_pairs_per_s": MEASURED_TRAIN_PAIRS / MEASURED_GPU["alone_train_s"],
    # a wave of members: the training stage less the members' span (19.3 s alone, 16.6 packed): the
    # trial's process, imports, the backbone and pairs loaded, the checkpoint saved, Tune's books
    "member_fixed_s": _runs_mean(lambda run: MEASURED_STAGES_S[run]["training"] - _member_span_s(run)),
    # the scoring stage's start-up, once a run: the stage less its rows at the measured rate (18.8 s,
    # 17.1 s): the Ray Data pipeline, its scorer actors started (process, imports, CUDA context), the
    # members loaded. Both grids had one cell; rankuq then started new actors for every cell, and
    # paid it again each cell. Since the run's one scoring pass (bench.engine.scoring.score_cells) an
    # actor lives for the whole stage: what a later cell pays is its members' loading (below)
    "score_fixed_s": _runs_mean(lambda run: MEASURED_STAGES_S[run]["scoring"] - _scored_s(run)),
    # the run: its wall time less both stages (5.4 s, 6.3 s): Ray's start, the plan, MLflow, evaluation
    "run_fixed_s": _runs_mean(
        lambda run: MEASURED_GPU["run_wall_s"][run] - sum(MEASURED_STAGES_S[run].values())
    ),
}


# What a (cell, split) costs beyond its rows once the scoring pass's actors are up, and what a list
# costs to tokenise once (both measured on this project's CPU machine, not on a GPU):
SCORING_PER_SPLIT: dict[str, dict[str, float | str]] = {
    "member_load_s": {
        "value": 0.5,
        "source": "a warm process (imports done) building a MiniLM-L6 member's ShardScorer, three times: "
        "0.45-0.51 s (CPU, 2026-11-27, load average 7-13 on 2 cores); assumed the same where a GPU actor "
        "loads it (the weights' copy to the card and their bf16 cast not measured)",
    },
    "tokenize_fixed_s": {
        "value": 3.0,
        "source": "assumed: a list's token ids made once (bench.engine.tokens, Ray Data CPU tasks: a "
        "worker and the tokeniser started) on a 16-core machine; measured 15 s a list on 2 loaded cores "
        "(load average 20, 2,351 and 1,130 WikiQA rows, tiny tokeniser)",
    },
    "tokenizer_pairs_per_s": {
        "value": 6000.0,
        "source": "shared/gpu/h100-2026-11-27 limit.json: the fast tokeniser, one process, 6.0k pairs/s "
        "(a list's parts run in parallel tasks: an upper bound)",
    },
}


def _per_split(name: str) -> float:
    return float(SCORING_PER_SPLIT[name]["value"])


def gpu_scoring_pairs_per_s(method: str, params: dict[str, float], precision: str) -> float:
    """Pairs a second ``method`` scores on the GPU in ``precision`` ("bf16" or "fp32"), as measured;
    mc_dropout and the ensemble scaled by their draws (each a whole pass); a method not measured (the
    post-hoc maps, which run bert's model; conv_knrm; a plugin) at bert's rate."""
    rates: dict[str, float] = MEASURED_GPU["scoring_pairs_per_s"][precision]
    label = next((label for label in rates if label.split()[0] == method), "bert")
    drawn = re.fullmatch(r"(mc_dropout|ensemble) \((\w)=(\d+)\)", label)
    if drawn is None:
        return rates[label]
    name, measured = drawn.group(2), float(drawn.group(3))
    return rates[label] * measured / params.get(name, measured)


def gpu_slowdown(layers: int, max_length: int) -> float:
    """How much slower than measured a model of ``layers`` at ``max_length`` trains and scores: by
    layers × tokens above the measured MiniLM-L6 at 128, never faster below it (the measured rates
    are bound by per-batch overheads, not by FLOPs)."""
    return max(1.0, layers * max_length / (MEASURED_LAYERS * MEASURED_MAX_LENGTH))


def members_at_once(resources: "ResourcesConfig") -> int:
    """Members one GPU trains at once: as many shares of ``gpus_per_trial`` as it holds (one when the
    grid asks for no GPU, or a whole one), at most ``max_concurrent_trials``."""
    share = resources.gpus_per_trial
    fits = int(1 / share + 1e-9) if 0 < share < 1 else 1
    return min(fits, resources.max_concurrent_trials or fits)


def _waves_s(member_s: list[float], at_once: int) -> float:
    """Wall seconds of members of ``member_s`` seconds each, ``at_once`` at a time, longest first:
    each wave its longest member (slowed by packing when it shares the GPU) and its fixed cost."""
    ordered = sorted(member_s, reverse=True)
    waves = [ordered[start : start + at_once] for start in range(0, len(ordered), at_once)]
    slowed = [MEASURED_GPU["packed_over_alone"] if len(wave) > 1 else 1.0 for wave in waves]
    return sum(
        wave[0] * factor + GPU_COST["member_fixed_s"] for wave, factor in zip(waves, slowed, strict=True)
    )


@dataclass(frozen=True)
class Scored:
    """A (cell, split) left to score, as the GPU plan counts it."""

    method: str
    params: dict[str, float]
    rows: int
    members: int  # models its scorer loads
    lists: str  # the folder of its candidate lists (tokenised once for all the splits that read it)


@dataclass(frozen=True)
class GpuWork:
    """The work a plan leaves, as the GPU plan counts it."""

    members: list[tuple[float, float]]  # per member or search trial: (training pair-epochs, dev pairs scored)
    scored: list[Scored]


def gpu_seconds(spec: "GridSpec", work: GpuWork) -> float:
    """Wall seconds of ``work`` on one GPU like the measured one: the run's fixed cost, the members
    in waves, and the scoring pass (``scoring_seconds``). Not counted: building candidate lists,
    post-hoc fits and probes (CPU work)."""
    if not work.members and not work.scored:
        return 0.0
    slower = gpu_slowdown(spec.model.layers or MEASURED_LAYERS, spec.model.max_length)
    precision = "fp32" if spec.eval.precision == "fp32" else "bf16"  # "auto" is bf16 on a GPU
    train_rate = GPU_COST["train_pairs_per_s"] / slower
    dev_rate = gpu_scoring_pairs_per_s("bert", {}, precision) / slower  # a member's dev scoring: one pass
    member_s = [pairs / train_rate + dev / dev_rate for pairs, dev in work.members]
    at_once = members_at_once(spec.resources)
    scoring_s = scoring_seconds(work.scored, slower, precision, at_once)
    return GPU_COST["run_fixed_s"] + _waves_s(member_s, at_once) + scoring_s


def scoring_seconds(scored: list[Scored], slower: float, precision: str, actors: int) -> float:
    """Wall seconds of the run's one scoring pass over ``scored``: its start-up once, each list's
    tokenising once, each split's rows at the measured single-stream rate (the ``actors`` sharing the
    GPU are not counted faster) and its members' loading, which the actors do side by side. BM25's
    splits are scored on an actor's CPU, beside the GPU's work: not counted."""
    neural = [split for split in scored if split.method != "bm25"]
    if not neural:
        return 0.0
    lists = {split.lists: split.rows for split in neural}
    tokenize = sum(
        _per_split("tokenize_fixed_s") + rows / _per_split("tokenizer_pairs_per_s") for rows in lists.values()
    )
    rows = sum(
        split.rows * slower / gpu_scoring_pairs_per_s(split.method, split.params, precision)
        for split in neural
    )
    loads = (
        sum(split.members for split in neural)
        * _per_split("member_load_s")
        / max(1, min(actors, len(neural)))
    )
    return GPU_COST["score_fixed_s"] + tokenize + rows + loads


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
    lines.append(
        f"estimated work left: {cpu:.3g} CPU-hours (one core, fp32) or {gpu_seconds(spec, work) / 3600:.2g} "
        f"GPU-hours (one H100, {_count(at_once, 'member')} at once; rankuq's throughputs and fixed costs as "
        f"measured at c99ffb5). Sources: bench/planning/capacity.py COST (docs/benchmarks.md) and "
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
    members = [
        (
            train_pair_epochs(job, sizes, job.train["epochs"]),
            _dev_rows(job.dev_shards, sizes) * job.train["epochs"],
        )
        for key, job in plan.members.items()
        if not layout.training_file(key).exists()
    ]
    for search in plan.searches:
        if search_choice(layout, search) is not None:
            continue
        assert spec.search is not None  # a plan searches only for a grid with a search section
        epochs = trial_epochs(spec.search, search.trial.job.train["epochs"])
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
