"""The arithmetic of capacity plans (docs/scale.md, `rankuq run --plan`): a grid's pairs and members
turned into FLOPs, CPU hours and GPU seconds, from the measured costs of bench.planning.measured.

`--plan`'s GPU-hours come from what rankuq measured on a real H100 (``MEASURED_GPU``): training and
scoring throughputs and the fixed costs of a run, a wave of members and the run's one scoring pass,
with what a scored (cell, split) adds to it (``SCORING_PER_SPLIT``). The FLOP arithmetic
(``estimate``, peak × an assumed utilisation) is the on-paper plan of docs/scale.md; it was 99× too
low against that run.
"""

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rankuq.bench.planning.measured import (
    EXTRA_MEMBERS,
    FORWARD_PASSES,
    GPU_COST,
    MEASURED_GPU,
    MEASURED_LAYERS,
    MEASURED_MAX_LENGTH,
    SCORING_PER_SPLIT,
    PerMethod,
    value,
)

if TYPE_CHECKING:
    from rankuq.bench.config.grid import GridSpec
    from rankuq.bench.config.resources import ResourcesConfig


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
