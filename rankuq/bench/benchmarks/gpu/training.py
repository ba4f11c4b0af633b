"""(e) Training throughput beside its limit (issue 40): rankuq's ``fine_tune`` and a plain PyTorch
loop train the same fresh cross-encoder on the same WikiQA training pairs, batch size, learning rate
and precision, one after the other in the same process; pairs/s of each with and without tokenizing,
and rankuq's ratio to the plain loop (the goal: at least 5,000 pairs/s on an H100).

The plain loop is the method of limit.json applied to training: the pairs tokenized once on the host
and moved to the device, batches of rows sorted by length within each batch's window, each padded to
its longest, bf16 autocast, fused AdamW on a GPU, the loss never read during the epoch."""

import random
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.nn import functional

from rankuq import tasks
from rankuq.backbone import ModelConfig, build_cross_encoder, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.training_loop import (
    Pairs,
    TokenizedPairs,
    balanced_pairs,
    fine_tune,
    length_bucketed_batches,
)

NEGATIVES = 4  # as the packing benchmark's grid: each relevant sentence with 4 of its list's others


def training_pairs(limit: int | None) -> Pairs:
    """WikiQA's training pairs as a grid's member draws them (its native lists, 4 negatives), the
    first ``limit`` of them (all with None)."""
    table = tasks.get("wikiqa")().load("train", tasks.data_root())
    return balanced_pairs(table, seed=0, negatives=NEGATIVES)[:limit]


def _synced(device: torch.device) -> Callable[[], None]:
    return torch.cuda.synchronize if device.type == "cuda" else lambda: None


def rankuq_epoch(config: ModelConfig, train: TrainConfig, pairs: Pairs, device: torch.device) -> float:
    """Seconds of one epoch of ``fine_tune`` (tokenizing included: it tokenizes once, inside)."""
    model: nn.Module = build_cross_encoder(config, seed=0)
    model = model.to(device)
    tokenizer = load_tokenizer(config)
    sync = _synced(device)
    sync()
    start = time.perf_counter()
    fine_tune(model, tokenizer, pairs, config, train, seed=0)  # reads its losses at the epoch's end
    sync()
    return time.perf_counter() - start


def plain_epoch(
    config: ModelConfig, train: TrainConfig, pairs: Pairs, device: torch.device
) -> dict[str, float]:
    """Seconds of one epoch of the plain loop: tokenizing, and the steps."""
    model: nn.Module = build_cross_encoder(config, seed=0)
    model = model.to(device).train()
    tokenizer = load_tokenizer(config)
    sync = _synced(device)
    start = time.perf_counter()
    tokenized = TokenizedPairs(tokenizer, pairs, config.max_length, device)
    sync()
    tokenizing = time.perf_counter() - start
    batches = length_bucketed_batches(tokenized.lengths, train.batch_size, random.Random(0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=train.lr, fused=device.type == "cuda")
    start = time.perf_counter()
    for inputs, labels in tokenized.batches(batches):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=train.precision == "bf16"):
            loss = functional.cross_entropy(model(**inputs).logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    sync()
    return {"tokenizing_s": tokenizing, "steps_s": time.perf_counter() - start}


PROFILED_BATCHES = 20  # steps of rankuq's loop under torch.profiler: enough to show the per-step pattern
# Where the host reads a tensor's value, which on a GPU waits for the device: an explicit sync, .item(),
# bool(tensor) (transformers' masking_utils asks padding_mask.all() once per forward).
HOST_READS = ("Synchronize", "aten::item", "aten::is_nonzero")


def profile_steps(
    config: ModelConfig, train: TrainConfig, pairs: Pairs, device: torch.device
) -> dict[str, Any]:
    """torch.profiler over a few steps of ``fine_tune``: the ops that take the host's and the device's
    time (self time, ms, the top 12 of each) and how often the host waited for the device: where a
    member's time goes, per step, on the machine that runs it."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    subset = pairs[: PROFILED_BATCHES * train.batch_size]
    with profile(activities=activities) as profiled:
        seconds = rankuq_epoch(config, train, subset, device)
    events = profiled.key_averages()

    def top(key: str) -> list[dict[str, Any]]:
        ranked = sorted(events, key=lambda event: getattr(event, key), reverse=True)[:12]
        return [
            {
                "op": event.key,
                "calls": event.count,
                "self_cpu_ms": round(event.self_cpu_time_total / 1e3, 2),
                "self_device_ms": round(event.self_device_time_total / 1e3, 2),
            }
            for event in ranked
        ]

    steps = -(-len(subset) // train.batch_size)
    waits = {e.key: round(e.count / steps, 2) for e in events if any(name in e.key for name in HOST_READS)}
    return {
        "steps": steps,
        "seconds": round(seconds, 3),
        "top_host": top("self_cpu_time_total"),
        "top_device": top("self_device_time_total") if device.type == "cuda" else [],
        "host_reads_per_step": waits,  # on a CPU, reads of CPU tensors (AdamW's step counts): no wait
    }


def training(
    config: ModelConfig, device: torch.device, limit: int | None, batch_size: int = 32
) -> dict[str, Any]:
    """rankuq's epoch and the plain loop's on the same pairs (a warm-up epoch of the plain loop on a
    few batches first, so neither pays the device's start-up)."""
    pairs = training_pairs(limit)
    precision = "bf16"
    train = TrainConfig(epochs=1, batch_size=batch_size, precision=precision)
    plain_epoch(config, train, pairs[: 4 * batch_size], device)  # warm-up: kernels, allocator, cuBLAS
    plain = plain_epoch(config, train, pairs, device)
    rankuq_s = rankuq_epoch(config, train, pairs, device)
    plain_total = plain["tokenizing_s"] + plain["steps_s"]
    profiled = profile_steps(config, train, pairs, device)
    return {
        "pairs": len(pairs),
        "batch_size": batch_size,
        "precision": f"{precision} autocast",
        "rankuq": {"seconds": round(rankuq_s, 3), "pairs_per_s": round(len(pairs) / rankuq_s, 1)},
        "plain loop": {
            "seconds": round(plain_total, 3),
            "tokenizing_s": round(plain["tokenizing_s"], 3),
            "pairs_per_s": round(len(pairs) / plain_total, 1),
            "pairs_per_s_without_tokenizing": round(len(pairs) / plain["steps_s"], 1),
        },
        "rankuq_over_plain": round(plain_total / rankuq_s, 3),  # throughput ratio: 1 is the limit
        "goal_pairs_per_s": 5000,
        "goal_met": len(pairs) / rankuq_s >= 5000,
        "profile": profiled,
    }
