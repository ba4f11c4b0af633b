"""(b) Scoring throughput of every method through rankuq's scorer on the device in bf16 and fp32,
beside a plain PyTorch loop measured in the same run and the papers' cost tables, and (c)
agreement: one trained member's probabilities on the device (bf16, fp32) against the CPU in fp32,
and the same member trained twice from the same seed (alone and packed)."""

import argparse
import functools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import torch
from torch import nn

from rankuq import methods, tasks
from rankuq.backbone import ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.bench import metrics
from rankuq.bench.benchmarks.method_cost import Case
from rankuq.bench.engine.scoring import score_frame
from rankuq.bench.findings.claims.paper003_004 import TIMES
from rankuq.methods.base import NeuralMethod

# The methods the papers time (003 Table 2, 004 Table 3), at their settings, and the last-layer head.
CASES = [
    Case("bert", {}),
    Case("mc_dropout", {"T": 10}),
    Case("ensemble", {"M": 5}),
    Case("last_layer_mc", {"T": 100}),
    Case("sngp", {}),
    Case("gpf", {}),
    Case("pg_gp", {}),
]
BOARD_METRICS = [*metrics.DEFAULT_METRICS, "ECE"]
PLAIN, PLAIN_BATCH = "plain loop", 1024
PLAIN_WHAT = (
    "plain PyTorch (limit.json's method): the cross-encoder in inference mode, bf16 weights on a GPU "
    "(autocast on a CPU), rows sorted by length in batches of 1,024, each padded to its longest"
)


def paper_ratios() -> dict[str, dict[str, float]]:
    """Each paper's inference time of a method over bert's, by source."""
    return {
        source: {method: round(t / times["bert"], 2) for method, t in times.items()}
        for source, (_, times) in TIMES.items()
    }


def timed(runs: dict[str, Callable[[], Any]], device: torch.device, repeats: int) -> dict[str, list[float]]:
    """Each of ``runs`` once to warm up, then ``repeats`` rounds of all of them in turn (side by side on
    a host whose load drifts), each call waited for to its end on ``device``: the seconds of each."""
    sync: Callable[[], None] = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    seconds: dict[str, list[float]] = {label: [] for label in runs}
    for repeat in range(repeats + 1):
        for label, run in runs.items():
            sync()
            start = time.perf_counter()
            run()
            sync()
            if repeat:
                seconds[label].append(time.perf_counter() - start)
    return seconds


def tokenized(config: ModelConfig, frame: pd.DataFrame) -> dict[str, torch.Tensor]:
    """The rows' token ids, padded to the longest of them (the scorer cuts each pass to its own)."""
    contexts = [list(turns) for turns in frame["context"]]
    return encode_pairs(load_tokenizer(config), contexts, frame["text"].tolist(), config.max_length)


def rankuq_scorers(
    config: ModelConfig, device: torch.device, half: bool
) -> dict[str, Callable[[dict[str, torch.Tensor]], Any]]:
    """Each case's scorer as a grid's scoring builds it (``NeuralMethod.make_scorer``: freshly built
    members, bf16 weights with ``half``), from token ids."""
    weights = torch.bfloat16 if half else torch.float32
    scorers = {}
    for case in CASES:
        method = methods.create(case.method, case.params, case.label)
        assert isinstance(method, NeuralMethod)  # the cases are neural methods
        built = [method.build_model(config, seed).to(device) for seed in range(method.members())]
        models = [method.inference_model(model, weights) for model in built]
        scorers[case.label] = method.token_scorer(config, models)
    return scorers


def plain_loop(
    config: ModelConfig, device: torch.device, half: bool
) -> Callable[[dict[str, torch.Tensor]], Any]:
    """The limit the card allows (limit.json's method, not rankuq's code): the cross-encoder in
    inference mode, bf16 weights with ``half``, rows sorted by length in batches of ``PLAIN_BATCH``,
    each padded to its longest, its probabilities put back in the rows' order."""
    model: nn.Module = build_cross_encoder(config, seed=0)
    model = model.to(device, torch.bfloat16 if half else torch.float32).eval()

    @torch.inference_mode()
    def score(inputs: dict[str, torch.Tensor]) -> np.ndarray:
        lengths = inputs["attention_mask"].sum(dim=1)
        order = torch.argsort(lengths)
        out = []
        for rows in order.split(PLAIN_BATCH):
            width = int(lengths[rows].max())
            batch = {name: tensor[rows, :width].to(device) for name, tensor in inputs.items()}
            out.append(torch.softmax(model(**batch).logits.float(), dim=-1)[:, 1])
        probabilities = torch.empty(len(order))
        probabilities[order] = torch.cat(out).cpu()
        return probabilities.numpy()

    return score


def throughput(config: ModelConfig, device: torch.device, pairs: int, repeats: int) -> dict[str, Any]:
    """Pairs/s of every case in fp32 and bf16 on ``device`` through rankuq's scorer (the fastest of
    ``repeats`` timed calls over the first ``pairs`` WikiQA test pairs, from token ids: forward passes
    as the method cuts them), each one's time over bert's; beside them the plain loop in the same run
    and bert's ratio to it, the tokeniser's pairs/s (one process), and bert's pairs/s with it.

    bf16 is what a grid's scoring runs: the weights in bfloat16 on a GPU, autocast on a CPU."""
    frame = test_frame(None)
    frame = pd.concat([frame] * -(-pairs // len(frame)), ignore_index=True).iloc[:pairs]
    inputs = tokenized(config, frame)
    tokenize_s = timed({"tokenize": lambda: tokenized(config, frame)}, torch.device("cpu"), repeats)[
        "tokenize"
    ]
    table: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for precision in ("fp32", "bf16"):
        half = precision == "bf16" and device.type == "cuda"
        autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16" and not half)
        with autocast:
            scorers = rankuq_scorers(config, device, half) | {PLAIN: plain_loop(config, device, half)}
            seconds = timed(
                {label: functools.partial(score, inputs) for label, score in scorers.items()}, device, repeats
            )
        bert = min(seconds["bert"])
        table[precision] = {
            case.label: {
                "pairs_per_s": round(pairs / min(seconds[case.label]), 1),
                "over_bert": round(min(seconds[case.label]) / bert, 3),
                "seconds": [round(s, 4) for s in seconds[case.label]],
            }
            for case in CASES
        }
        plain[precision] = {
            "pairs_per_s": round(pairs / min(seconds[PLAIN]), 1),
            "seconds": [round(s, 4) for s in seconds[PLAIN]],
            "bert_over_plain": round(min(seconds[PLAIN]) / bert, 3),  # rankuq's share of the limit
            "bert_with_tokenization_pairs_per_s": round(pairs / (bert + min(tokenize_s)), 1),
        }
    bert_method = methods.create("bert")
    assert isinstance(bert_method, NeuralMethod)
    rows = bert_method.forward_rows(device, [build_cross_encoder(config, 0)], config.max_length)
    return {
        "pairs": pairs,
        "batch": rows,  # bert's rows per forward pass on this device
        "by_precision": table,
        "plain_loop": plain | {"batch": PLAIN_BATCH, "what": PLAIN_WHAT},
        "tokenize": {
            "pairs_per_s": round(pairs / min(tokenize_s), 1),
            "seconds": [round(s, 4) for s in tokenize_s],
        },
        "papers": paper_ratios(),
    }


def test_frame(rows: int | None) -> pd.DataFrame:
    """The WikiQA test lists (the first ``rows`` candidates: whole lists, as they come in order)."""
    table = tasks.get("wikiqa")().load("test", tasks.data_root())
    return cast(pd.DataFrame, (table if rows is None else table.slice(0, rows)).to_pandas())


def member_scores(
    config: ModelConfig, folder: Path, frame: pd.DataFrame, device: torch.device, bf16: bool
) -> pa.Table:
    """The predictions of the `bert` member in ``folder`` on ``frame``, scored on ``device`` as a grid's
    scoring does (``bf16``: the weights in bfloat16 on a GPU, autocast on a CPU)."""
    method = methods.create("bert")
    assert isinstance(method, NeuralMethod)
    half = bf16 and device.type == "cuda"
    member = method.load_member(config, folder).to(device)
    scorer = method.batch_scorer(
        config, [method.inference_model(member, torch.bfloat16 if half else torch.float32)]
    )
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16 and not half):
        return score_frame(scorer, frame, 512, methods.get("bert").probabilistic)


def board(table: pa.Table) -> dict[str, float]:
    values = metrics.compute(table, BOARD_METRICS, drop_queries_without_relevant=True)
    return {name: round(value, 6) for name, value in values.items()}


def max_gap(a: pa.Table, b: pa.Table) -> float:
    return float(np.abs(a["prob_mean"].to_numpy() - b["prob_mean"].to_numpy()).max())


def agreement(
    config: ModelConfig, alone: Path, packed: Path, device: torch.device, rows: int | None
) -> dict[str, Any]:
    """The member trained alone, scored on ``device`` in bf16 and fp32 and on the CPU in fp32 (the
    reference): the largest probability gap and every leaderboard metric; and the same member (same
    key, same seed) trained in the packed run, scored on ``device`` in fp32 beside it."""
    frame = test_frame(rows)
    cpu = torch.device("cpu")
    runs = {
        f"{device.type}_bf16": member_scores(config, alone, frame, device, True),
        f"{device.type}_fp32": member_scores(config, alone, frame, device, False),
        "cpu_fp32": member_scores(config, alone, frame, cpu, False),
    }
    again = member_scores(config, packed, frame, device, False)
    reference = runs["cpu_fp32"]
    return {
        "pairs": len(frame),
        "max_abs_diff_vs_cpu_fp32": {name: max_gap(table, reference) for name, table in runs.items()},
        "metrics": {name: board(table) for name, table in runs.items()},
        "same_seed": {
            "max_abs_diff": max_gap(again, runs[f"{device.type}_fp32"]),
            "metrics_equal": board(again) == board(runs[f"{device.type}_fp32"]),
            "what": "the member trained alone against the same member (same key and seed) trained "
            "packed beside four others, both scored on the device in fp32",
        },
    }


def main() -> None:
    """Part (b) alone, for a short device call: the scoring throughput as JSON on stdout and in
    OUT/scoring.json, with the machine's load."""
    parser = argparse.ArgumentParser(prog="python -m rankuq.bench.benchmarks.gpu.scoring")
    parser.add_argument("out", type=Path, help="folder for scoring.json")
    parser.add_argument("--pairs", type=int, default=24_464, help="WikiQA test pairs (limit.json: 6,116 x 4)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--cpu", action="store_true", help="run on the CPU even where a GPU is")
    parser.add_argument("--tiny", action="store_true", help="the tiny random BERT (the wiring's test)")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.cpu else "cpu")
    config = ModelConfig(backbone="tiny", max_length=32) if args.tiny else ModelConfig(max_length=128)
    started = time.perf_counter()
    result = throughput(config, device, args.pairs, args.repeats)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    result["machine"] = {"device": name, "load_average": [round(x, 2) for x in os.getloadavg()]}
    result["wall_s"] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=1)
    (args.out / "scoring.json").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
