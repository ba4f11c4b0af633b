"""The costs the capacity plan is made of, each read from a dated record (rankuq/records/,
rankuq.measurements) with its source: per-pair FLOPs and CPU times, encoder passes per method, and
what rankuq measured on one H100 (throughputs and the fixed costs of a run).
"""

import re
from collections.abc import Callable
from typing import TypedDict

from rankuq.measurements import figure, source

FLOPS, THROUGHPUT = "2026-11-23-flop-count", "2026-11-21-inference-throughput-cpu"
METHOD_COST, MC_DROPOUT = "2026-11-21-method-cost-cpu", "2026-11-25-mc-dropout-cost-cpu"
TRAINING, ASSUMED = "2026-11-21-default-grid-training-cpu", "planning-assumptions"
STAGES, LOADING = "2026-11-27-h100-stages", "2026-11-27-member-load-cpu"


def _cost(name: str, key: str) -> dict[str, float | str]:
    return {"value": figure(name, key), "source": source(name, key)}


# Every figure with where it comes from.
COST: dict[str, dict[str, float | str]] = {
    "gflop_per_token_layer": _cost(FLOPS, "gflop_per_token_layer"),
    "measured_gflop_per_pair_l2_wikiqa": {
        "value": figure(THROUGHPUT, "gflop_wikiqa_test_l2") / figure(THROUGHPUT, "pairs_wikiqa_test"),
        "source": f"{source(THROUGHPUT, 'gflop_wikiqa_test_l2')} over its pairs (mean ≈ 41 tokens: 64 % "
        "of the full-length count)",
    },
    "train_over_forward": _cost(ASSUMED, "train_over_forward"),
    "params_minilm_l2_m": _cost(METHOD_COST, "params_minilm_l2_m"),
    "params_minilm_l6_m": _cost(METHOD_COST, "params_minilm_l6_m"),
    "train_bytes_per_param": _cost(ASSUMED, "train_bytes_per_param"),
    "activation_bytes_per_token_layer": _cost(ASSUMED, "activation_bytes_per_token_layer"),
    "h100_bf16_dense_tflops": _cost(ASSUMED, "h100_bf16_dense_tflops"),
    "h100_memory_gb": _cost(ASSUMED, "h100_memory_gb"),
    "utilisation": _cost(ASSUMED, "utilisation"),
    # `rankuq run --plan`'s CPU-hours
    "cpu_ms_per_pair_l2": _cost(METHOD_COST, "bert_ms_per_pair_l2"),
    "cpu_ms_per_pair_l6": _cost(METHOD_COST, "bert_ms_per_pair_l6"),
    "cpu_train_over_forward": _cost(TRAINING, "train_over_forward"),
}


def value(name: str) -> float:
    return float(COST[name]["value"])


# A count per pair or per seed: a number, or a function of the method's parameters (T, M).
PerMethod = float | Callable[[dict[str, float]], float]


def _l6(method: str) -> float:
    return figure(METHOD_COST, f"{method}_cost_l6")


# Forward passes of the encoder per scored pair, relative to `bert` (S = 1), on a GPU. Measured CPU
# ratios at MiniLM-L6 where the draws are cheap heads (the GP heads' 0.99-1.00 counted as 1: inside
# the ±2 % noise); T or M where each draw is a whole pass (paper 003/004 measured 9.7× for T = 10 on
# GPUs; the CPU's 17× is mask drawing).
FORWARD_PASSES: dict[str, PerMethod] = {
    "bm25": 0.0,
    "bert": 1.0,
    "mc_dropout": lambda p: p.get("T", 10),
    "ensemble": lambda p: p.get("M", 5),
    "last_layer_mc": _l6("last_layer_mc_t100"),
    "sngp": 1.00,
    "gpf": 1.00,
    "pg_gp": 1.00,
    "conv_knrm": _l6("conv_knrm"),
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
# On a CPU, at MiniLM-L2: a draw of mc_dropout costs more than a pass (its masks, attention without
# SDPA's fused kernel; the 16-bit masks' run at T = 10), the ensemble's members a little more each.
_MC_DRAW = figure(MC_DROPOUT, "mc_dropout_t10_cost_l2") / 10
_ENSEMBLE_MEMBER = figure(METHOD_COST, "ensemble_m5_cost_l2") / 5
CPU_FORWARD_PASSES: dict[str, PerMethod] = {
    **FORWARD_PASSES,
    "mc_dropout": lambda p: _MC_DRAW * p.get("T", 10),
    "ensemble": lambda p: _ENSEMBLE_MEMBER * p.get("M", 5),
    "last_layer_mc": figure(METHOD_COST, "last_layer_mc_t100_cost_l2"),
    "conv_knrm": figure(METHOD_COST, "conv_knrm_cost_l2"),
}


# --- `rankuq run --plan` on a GPU: what rankuq measured on one, not FLOPs ---

GPU_RECORD = f"rankuq/records/{STAGES}.json"
# The first H100 run (rankuq at c99ffb5 on one H100 80GB, MiniLM-L6 at max length 128, members
# trained in bf16 autocast at batch 32, scoring at batch 64), as its record has it: the packing
# benchmark's WikiQA grid, once with one `bert` member ("alone") and once with a 5-member ensemble at
# gpus_per_trial 0.2 ("packed"), one seed, no dev split, no probes; and the scoring throughputs of
# the methods, labelled as the benchmark labels them (a test checks both against its JSON,
# rankuq/records/data/2026-11-27-h100/gpu.json).
SCORED_LABELS = (
    "bert",
    "mc_dropout (T=10)",
    "ensemble (M=5)",
    "last_layer_mc (T=100)",
    "sngp",
    "gpf",
    "pg_gp",
)


def figure_key(label: str) -> str:
    """A benchmark label's name in a record: "mc_dropout (T=10)" → "mc_dropout_t_10"."""
    return re.sub(r"\W+", "_", label.lower()).strip("_")


class MeasuredGpu(TypedDict):
    alone_train_s: float  # the member's model on the GPU → its last report
    packed_over_alone: float  # five members at once, each this much slower
    members_packed: int
    run_wall_s: dict[str, float]  # "alone"/"packed" → the whole `grid_run`
    scoring_pairs_per_s: dict[str, dict[str, float]]  # precision → label → pairs/s


MEASURED_GPU = MeasuredGpu(
    alone_train_s=figure(STAGES, "alone_train_s"),
    packed_over_alone=figure(STAGES, "packed_over_alone"),
    members_packed=int(figure(STAGES, "members_packed")),
    run_wall_s={run: figure(STAGES, f"{run}_run_wall_s") for run in ("alone", "packed")},
    scoring_pairs_per_s={
        precision: {
            label: figure(STAGES, f"{precision}_{figure_key(label)}_pairs_per_s") for label in SCORED_LABELS
        }
        for precision in ("bf16", "fp32")
    },
)
# The two runs' stages as their progress bars timed them, and what the plan counts of the measured grid.
MEASURED_STAGES_S = {
    run: {stage: figure(STAGES, f"{run}_{stage}_s") for stage in ("training", "scoring")}
    for run in ("alone", "packed")
}
MEASURED_TRAIN_PAIRS = int(figure(STAGES, "train_pairs"))
MEASURED_TESTED_ROWS = int(figure(STAGES, "tested_rows"))
MEASURED_LAYERS = int(figure(STAGES, "layers"))
MEASURED_MAX_LENGTH = int(figure(STAGES, "max_length"))


def _scored_s(run: str) -> float:
    """Seconds of pure scoring in ``run``: its tested rows at the measured bf16 rate of its method."""
    label = "bert" if run == "alone" else "ensemble (M=5)"
    return MEASURED_TESTED_ROWS / float(MEASURED_GPU["scoring_pairs_per_s"]["bf16"][label])


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
# costs to tokenise once (measured on this project's CPU machine, or assumed, each said):
SCORING_PER_SPLIT: dict[str, dict[str, float | str]] = {
    # assumed the same where a GPU actor loads it (the weights' copy to the card and cast not measured)
    "member_load_s": _cost(LOADING, "member_load_s"),
    "tokenize_fixed_s": _cost(ASSUMED, "tokenize_fixed_s"),
    "tokenizer_pairs_per_s": _cost(STAGES, "tokenizer_pairs_per_s"),
}
