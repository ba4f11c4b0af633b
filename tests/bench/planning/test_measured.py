"""The plan's measured costs (bench.planning.measured): the GPU figures are the committed GPU record's,
the CPU figures the records' (rankuq/records/), each entry with a source naming its record."""

import json
import re
from pathlib import Path

from rankuq.bench.planning.measured import (
    COST,
    CPU_FORWARD_PASSES,
    FORWARD_PASSES,
    GPU_RECORD,
    MEASURED_GPU,
    MEASURED_TESTED_ROWS,
    SCORING_PER_SPLIT,
)

ROOT = Path(__file__).resolve().parents[3]
# What the GPU benchmark wrote on the first H100 run; its record (GPU_RECORD) holds the figures the plan reads
BENCHMARK = json.loads((ROOT / "rankuq/records/data/2026-11-27-h100/gpu.json").read_text())


def test_the_gpu_plans_figures_are_the_gpu_benchmarks_own():
    """The record the plan reads (rankuq/records/) holds the benchmark's JSON's figures, every label of it."""
    assert (ROOT / GPU_RECORD).is_file()
    packing = BENCHMARK["packing"]
    for name in ("alone_train_s", "packed_over_alone", "run_wall_s"):
        assert MEASURED_GPU[name] == packing[name]
    assert MEASURED_GPU["members_packed"] == packing["members"] == packing["most_at_once"]
    measured = {
        precision: {label: figures["pairs_per_s"] for label, figures in methods.items()}
        for precision, methods in BENCHMARK["throughput"]["by_precision"].items()
    }
    assert MEASURED_GPU["scoring_pairs_per_s"] == measured
    assert re.search(rf"ensemble +test +{MEASURED_TESTED_ROWS:,}\n", packing["plan"]["text"])


def test_every_cost_names_its_record_and_the_ratios_are_the_records():
    for entry in [*COST.values(), *SCORING_PER_SPLIT.values()]:
        assert re.search(r"rankuq/records/[\w-]+\.json: ", str(entry["source"])), entry
    assert CPU_FORWARD_PASSES["mc_dropout"]({"T": 10}) == 11.62  # 2026-11-25, 16-bit masks, L2
    assert CPU_FORWARD_PASSES["ensemble"]({"M": 5}) == 5.26  # 2026-11-21, L2
    assert (FORWARD_PASSES["last_layer_mc"], FORWARD_PASSES["conv_knrm"]) == (1.03, 0.12)  # L6
