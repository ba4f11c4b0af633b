"""(b) Scoring throughput of every method on the device in bf16 and fp32, beside the papers' cost
tables, and (c) agreement: one trained member's probabilities on the device (bf16, fp32) against
the CPU in fp32, and the same member trained twice from the same seed (alone and packed)."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from rankuq import methods, tasks
from rankuq.backbone import ModelConfig
from rankuq.bench import metrics
from rankuq.bench.benchmarks.method_cost import Case, measure, wikiqa_batches
from rankuq.bench.engine.scoring import score_frame
from rankuq.bench.findings.claims import TIMES
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


def paper_ratios() -> dict[str, dict[str, float]]:
    """Each paper's inference time of a method over bert's, by source."""
    return {
        source: {method: round(t / times["bert"], 2) for method, t in times.items()}
        for source, (_, times) in TIMES.items()
    }


def throughput(config: ModelConfig, device: torch.device, pairs: int, repeats: int) -> dict[str, Any]:
    """Pairs/s of every case in fp32 and bf16 on ``device`` (the fastest of ``repeats`` timed passes
    over the first ``pairs`` WikiQA test pairs, batches of 64), and each one's time over bert's."""
    batches = wikiqa_batches(config, pairs, 64)
    scored = sum(len(inputs["input_ids"]) for inputs in batches)
    table: dict[str, Any] = {}
    for precision in ("fp32", "bf16"):
        results = measure(config, batches, repeats, CASES, bf16=precision == "bf16", device=device)
        bert = min(results["bert"][0])
        table[precision] = {
            case.label: {
                "pairs_per_s": round(scored / min(results[case.label][0]), 1),
                "over_bert": round(min(results[case.label][0]) / bert, 3),
                "seconds": [round(s, 4) for s in results[case.label][0]],
            }
            for case in CASES
        }
    return {"pairs": scored, "batch": 64, "by_precision": table, "papers": paper_ratios()}


def test_frame(rows: int | None) -> pd.DataFrame:
    """The WikiQA test lists (the first ``rows`` candidates: whole lists, as they come in order)."""
    table = tasks.get("wikiqa")().load("test", tasks.data_root())
    return (table if rows is None else table.slice(0, rows)).to_pandas()


def member_scores(
    config: ModelConfig, folder: Path, frame: pd.DataFrame, device: torch.device, bf16: bool
) -> pa.Table:
    """The predictions of the `bert` member in ``folder`` on ``frame``, scored on ``device``."""
    method = methods.create("bert")
    assert isinstance(method, NeuralMethod)
    member = method.load_member(config, folder).to(device)
    scorer = method.batch_scorer(config, [member])
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
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
