"""Inference cost of every method as a ratio to `bert` (paper 004 Table 3, paper 003 Table 2).

The same inputs — the first ``pairs`` (query, candidate) rows of the real WikiQA test lists,
tokenised once into batches of ``batch-size`` — go through ``method.sample`` of every method on
the same backbone: the offline MiniLM cut to 2 layers (BERT-L2, the default grid's) and whole (L6).
Models are freshly built (cost does not depend on training). Each method is timed ``repeats``
times (10 by default: `rankuq findings` judges a timing claim on at least 10 repeats, as an exact
test over n repeats cannot give p below 2 / 2ⁿ), interleaved with the others; the tables show the
fastest pass, the CSV (``--out``) every repeat. Parameter counts are trainable
parameters over all members; "stored" adds the buffers (random-feature frequencies, GP precision).
Conv-KNRM rows only read the backbone's word embeddings; their last-layer MC is compared with the
deterministic Conv-KNRM.

    python -m rankuq.bench.benchmarks.method_cost [--pairs 512] [--batch-size 64] [--repeats 10] [--threads 1]
        [--only bert,mc_dropout] [--layers 2,6] [--precision bf16] [--out
            rankuq/records/data/method_cost-cpu.csv]

``--precision bf16`` scores every method under bfloat16 autocast (as a grid's ``eval.precision: bf16``),
worth it on CPUs with AVX512-BF16 or AMX; the flags the CPU has are printed with the tables.
"""

import argparse
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from tabulate import tabulate

from rankuq import methods, tasks
from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.methods.base import NeuralMethod

CPU_DEVICE = torch.device("cpu")


@dataclass(frozen=True)
class Case:
    method: str
    params: dict[str, Any]
    baseline: str = "bert"  # the label of the case its time is divided by
    target: float | None = None  # the largest acceptable ratio, where the issue sets one

    @property
    def label(self) -> str:
        settings = ", ".join(f"{key}={value}" for key, value in self.params.items())
        return f"{self.method} ({settings})" if settings else self.method


CASES = [
    Case("bert", {}),
    Case("mc_dropout", {"T": 10}),
    Case("ensemble", {"M": 5}),
    Case("last_layer_mc", {"T": 100}, target=1.15),
    Case("last_layer_mc", {"T": 150}),
    Case("sngp", {}, target=1.3),
    Case("gpf", {}, target=1.3),
    Case("pg_gp", {}, target=1.6),
    Case("conv_knrm", {}),
    Case("last_layer_mc", {"T": 100, "encoder": "conv_knrm"}, baseline="conv_knrm"),
]


def wikiqa_batches(config: ModelConfig, pairs: int, batch_size: int) -> list[dict[str, torch.Tensor]]:
    table = tasks.get("wikiqa")().load("test", tasks.data_root()).slice(0, pairs)
    contexts, texts = table.column("context").to_pylist(), table.column("text").to_pylist()
    tokenizer = load_tokenizer(config)
    return [
        encode_pairs(tokenizer, contexts[i : i + batch_size], texts[i : i + batch_size], config.max_length)
        for i in range(0, len(texts), batch_size)
    ]


def build(
    case: Case, config: ModelConfig, device: torch.device = CPU_DEVICE
) -> tuple[NeuralMethod, object, list[torch.nn.Module]]:
    method = methods.create(case.method, case.params, case.label)
    assert isinstance(method, NeuralMethod)  # the cases are neural methods
    models = [method.build_model(config, seed).to(device) for seed in range(method.members())]
    return method, method.params, models


def count(models: list[torch.nn.Module]) -> tuple[int, int]:
    """(trainable parameters, parameters + buffers) over all members."""
    parameters = sum(p.numel() for model in models for p in model.parameters())
    return parameters, parameters + sum(b.numel() for model in models for b in model.buffers())


def measure(
    config: ModelConfig,
    batches: list[dict[str, torch.Tensor]],
    repeats: int,
    cases: list[Case],
    bf16: bool = False,
    device: torch.device = CPU_DEVICE,
) -> dict[str, tuple[list[float], int, int]]:
    """Per case label: (seconds over all batches in each repeat, trainable params, stored numbers),
    the models and batches on ``device`` (a GPU's queued work is waited for inside each time)."""
    built = {case.label: build(case, config, device) for case in cases}
    batches = [{name: tensor.to(device) for name, tensor in inputs.items()} for inputs in batches]
    sync: Callable[[], None] = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    seconds: dict[str, list[float]] = {label: [] for label in built}
    with torch.inference_mode(), torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        for repeat in range(repeats + 1):  # the first pass warms up and is not counted
            for label, (method, _, models) in built.items():
                sync()
                start = time.perf_counter()
                for inputs in batches:
                    method.sample(models, inputs)
                sync()
                if repeat:
                    seconds[label].append(time.perf_counter() - start)
    return {label: (seconds[label], *count(built[label][2])) for label in built}


def report(results: dict[str, tuple[list[float], int, int]], pairs: int, cases: list[Case]) -> str:
    """A markdown table: one row per case, from its fastest repeat."""
    rows = []
    for case in cases:
        times, parameters, stored = results[case.label]
        seconds = min(times)
        ratio = seconds / min(results[case.baseline][0])
        met = case.target is not None and ratio <= case.target
        verdict = "" if case.target is None else f"≤ {case.target}: {'met' if met else 'MISSED'}"
        vs = "" if case.baseline == "bert" else f" (vs {case.baseline})"
        rows.append(
            [case.label, parameters / 1e6, stored / 1e6, 1000 * seconds / pairs, f"{ratio:.2f}×{vs}", verdict]
        )
    headers = ["method", "params (M)", "stored (M)", "ms / pair", "cost", "target"]
    return tabulate(rows, headers, tablefmt="github", floatfmt=".2f")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--repeats",
        type=int,
        default=10,
        help="timed passes per method (findings judges a timing on 10 or more)",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: steadier on a shared CPU)")
    parser.add_argument("--only", help="comma-separated methods to time (their baselines come along)")
    parser.add_argument("--layers", default="2,6", help="comma-separated MiniLM depths (6: the whole model)")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32", help="bf16: autocast")
    parser.add_argument(
        "--out", type=Path, help="CSV of every repeat's seconds (what rankuq findings --cost reads)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cases = chosen(args.only.split(",") if args.only else None)
    command = shlex.join(["python", "-m", "rankuq.bench.benchmarks.method_cost", *sys.argv[1:]])
    cpu = cpu_flags()
    rows = []
    for layers in map(int, args.layers.split(",")):
        config = ModelConfig(layers=None if layers == 6 else layers)
        batches = wikiqa_batches(config, args.pairs, args.batch_size)
        pairs = sum(len(b["input_ids"]) for b in batches)
        setup = f"batches of {args.batch_size}, {args.threads} threads, {args.precision}, CPU: {cpu}"
        print(f"\nMiniLM-L{layers}: {pairs} WikiQA test pairs, {setup}\n")
        load = os.getloadavg()[0]
        results = measure(config, batches, args.repeats, cases, args.precision == "bf16")
        print(report(results, pairs, cases))
        setting = {"layers": layers, "pairs": pairs, "threads": args.threads, "precision": args.precision}
        for case in cases:
            for repeat, seconds in enumerate(results[case.label][0]):
                rows.append(
                    {
                        **setting,
                        "method": case.method,
                        "label": case.label,
                        "repeat": repeat,
                        "seconds": seconds,
                        "cpu": cpu,
                        "load_average": load,
                        "command": command,
                    }
                )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(args.out, index=False)
        print(f"\nwrote {args.out}")


def cpu_flags() -> str:
    """The CPU's bf16 and vector flags (Linux /proc/cpuinfo), which decide fp32 and bf16 speed."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "flags unknown"
    flags = next((line.split() for line in text.splitlines() if line.startswith("flags")), [])
    wanted = ("avx2", "avx512f", "avx512_bf16", "amx_bf16")
    return ", ".join(flag for flag in wanted if flag in flags) or "no AVX2"


def chosen(names: list[str] | None) -> list[Case]:
    """The cases of ``names`` and the baselines they are divided by (all cases without names)."""
    if names is None:
        return CASES
    unknown = set(names) - {case.method for case in CASES}
    if unknown:
        raise SystemExit(f"--only: no case for {sorted(unknown)}; cases: {sorted({c.method for c in CASES})}")
    baselines = {case.baseline for case in CASES if case.method in names}
    return [case for case in CASES if case.method in names or case.label in baselines]


if __name__ == "__main__":
    main()
