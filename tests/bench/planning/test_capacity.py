"""The capacity arithmetic of bench.planning.capacity, against values worked out by hand."""

import json
import re
from pathlib import Path

import pytest

from rankuq.bench.config.grid import ResourcesConfig, parse_grid
from rankuq.bench.config.search_space import SearchConfig
from rankuq.bench.planning.capacity import (
    CPU_FORWARD_PASSES,
    GPU_COST,
    GPU_RECORD,
    MEASURED_GPU,
    MEASURED_TESTED_ROWS,
    MEASURED_TRAIN_PAIRS,
    SCORING_PER_SPLIT,
    Scored,
    _waves_s,
    counts,
    describe,
    estimate,
    forward_gflop,
    gpu_scoring_pairs_per_s,
    gpu_slowdown,
    members_at_once,
    scoring_cost,
    scoring_seconds,
    train_pair_epochs,
    trial_epochs,
    value,
)
from rankuq.bench.planning.plan import plan
from rankuq.bench.rundir.layout import RunLayout


def test_scoring_cost_is_pairs_times_passes_times_the_cost_of_a_pass():
    assert scoring_cost("bert", {}, 1000, 2.0) == 2000.0
    assert scoring_cost("mc_dropout", {"T": 4}, 1000, 2.0) == 8000.0  # T passes
    assert scoring_cost("mc_dropout", {"T": 4}, 1000, 2.0, CPU_FORWARD_PASSES) == pytest.approx(
        1000 * 1.162 * 4 * 2
    )
    assert scoring_cost("bm25", {}, 1000, 2.0) == 0.0
    assert scoring_cost("someone's plugin", {}, 1000, 2.0) == 2000.0  # counted as bert


def test_an_ensemble_estimate_by_hand():
    """M = 3, 2 seeds, 1,000 scored pairs a seed, 500 training pairs × 2 epochs, L2 × 64 tokens."""
    gflop = value("gflop_per_token_layer") * 2 * 64
    assert forward_gflop(2, 64) == pytest.approx(gflop)
    found = estimate("ensemble", {"M": 3}, 1000, 500, 2, 2, 64, 2)
    assert (found.pairs, found.passes, found.members) == (2000, 3.0, 4.0)  # 2 extra members a seed
    assert found.score_pflop == pytest.approx(2000 * 3 * gflop / 1e6)
    assert found.train_pflop == pytest.approx(4 * 500 * 2 * gflop * 3.0 / 1e6)


@pytest.mark.parametrize(
    ("scheduler", "epochs", "expected"),
    [
        ({"name": "fifo"}, 4, 4.0),
        # rungs 1, 2: every trial 1 epoch, half a 2nd, a quarter the last two: 1 + 1/2 + 2/4
        ({"name": "asha", "grace_period": 1, "reduction_factor": 2}, 4, 2.0),
        # rungs 1, 3: 1 + 2/3 + 6/9
        ({"name": "asha", "grace_period": 1, "reduction_factor": 3}, 9, 1 + 2 / 3 + 6 / 9),
        ({"name": "asha", "grace_period": 2, "reduction_factor": 2}, 2, 2.0),  # no rung below the last epoch
    ],
)
def test_a_search_trial_runs_the_epochs_its_scheduler_lets_it(scheduler, epochs, expected):
    search = SearchConfig(space={"train.lr": {"choice": [1e-5]}}, scheduler=scheduler)
    assert trial_epochs(search, epochs) == pytest.approx(expected)


def _work_left(tmp_path, grid) -> float:
    spec, params = parse_grid(grid, "test grid")
    text = describe(plan(spec, params, RunLayout(tmp_path / "run")))
    found = re.search(r"estimated work left: ([\d.e+-]+) CPU-hours", text)
    assert found, text
    return float(found.group(1))


def test_the_plan_counts_a_searchs_trials(tmp_path):
    """A 10,000-trial search was left out of --plan's estimate: trials × max_queries × epochs now."""
    grid = {
        "name": "searched",
        "tasks": ["wikiqa"],
        "methods": {"bert": {}},
        "seeds": [0],
        "train": {"max_queries": 30, "epochs": 2},
        "search": {
            "num_samples": 10,
            "scheduler": {"name": "fifo"},
            "space": {"train.lr": {"choice": [1e-5]}},
        },
    }
    small = _work_left(tmp_path, grid)
    large = _work_left(tmp_path, {**grid, "search": {**grid["search"], "num_samples": 10_000}})
    unsearched = _work_left(tmp_path, {key: value for key, value in grid.items() if key != "search"})
    # each trial costs what one member does: 30 queries × 2 pairs × 2 epochs, plus its dev scoring
    assert (large - unsearched) == pytest.approx(1000 * (small - unsearched), rel=0.01)
    assert large > 100 * unsearched


# --- the GPU plan: rankuq's measured throughputs and fixed costs (docs/gpu/h100-2026-11-27.json) ---

RECORD = json.loads((Path(__file__).resolve().parents[3] / GPU_RECORD).read_text())


def test_the_gpu_plans_figures_are_the_committed_records():
    packing = RECORD["packing"]
    for name in ("alone_train_s", "packed_over_alone", "run_wall_s"):
        assert MEASURED_GPU[name] == packing[name]
    assert MEASURED_GPU["members_packed"] == packing["members"] == packing["most_at_once"]
    measured = {
        precision: {label: figures["pairs_per_s"] for label, figures in methods.items()}
        for precision, methods in RECORD["throughput"]["by_precision"].items()
    }
    assert MEASURED_GPU["scoring_pairs_per_s"] == measured
    assert re.search(rf"ensemble +test +{MEASURED_TESTED_ROWS:,}\n", packing["plan"]["text"])


def measured_grid(methods: dict[str, dict]) -> dict:
    """The grid the record timed: bench/benchmarks/gpu/packing.py's packing_grid at c99ffb5 (WikiQA,
    MiniLM-L6 at 128 tokens, native lists with 4 negatives, 1 epoch, batch 32, bf16, 5 members a GPU)."""
    return {
        "name": "gpu-measured",
        "tasks": ["wikiqa"],
        "methods": methods,
        "seeds": [0],
        "baseline": next(iter(methods)),
        "model": {"layers": 6, "max_length": 128},
        "train": {"ns": "native", "negatives": 4, "epochs": 1, "batch_size": 32, "precision": "bf16"},
        "eval": {"split": "test", "probes": [], "dev_split": None, "precision": "auto"},
        "resources": {"gpus_per_trial": 0.2, "cpus_per_trial": 1.0, "trainer": "trial"},
    }


@pytest.mark.parametrize(("run", "methods"), [("alone", {"bert": {}}), ("packed", {"ensemble": {"M": 5}})])
def test_the_gpu_plan_of_the_measured_grids_is_within_1_5x_of_their_measured_wall_time(
    tmp_path, run, methods
):
    """Issue 40's bar: --plan's GPU-hours within 1.5× of the run's measured wall time (it was 99× low)."""
    spec, params = parse_grid(measured_grid(methods), "test grid")
    planned = plan(spec, params, RunLayout(tmp_path / "run"))
    assert [train_pair_epochs(job, counts(planned), 1) for job in planned.members.values()] == [
        MEASURED_TRAIN_PAIRS
    ] * len(planned.members)  # the training pairs the throughput was derived from, as the plan counts them
    text = describe(planned)
    hours = float(re.search(r"or ([\d.e+-]+) GPU-hours \(one H100, 5 members at once", text).group(1))
    measured = RECORD["packing"]["run_wall_s"][run] / 3600
    assert 1 / 1.5 <= hours / measured <= 1.5
    assert f"MEASURED_GPU ({GPU_RECORD})" in text  # the plan names the record it uses


def test_the_gpu_plans_arithmetic_by_hand():
    assert GPU_COST["train_pairs_per_s"] == pytest.approx(4365 / 29.7)
    assert GPU_COST["member_fixed_s"] == pytest.approx(((49 - 29.7) + (47 - 29.7 * 1.024)) / 2)
    bert, ensemble = 2351 / 14958.3, 2351 / 2760.2
    assert GPU_COST["score_fixed_s"] == pytest.approx(((19 - bert) + (18 - ensemble)) / 2)
    assert GPU_COST["run_fixed_s"] == pytest.approx(((73.41 - 68) + (71.33 - 65)) / 2)
    # each draw of mc_dropout and the ensemble a whole pass; a method not measured at bert's rate
    assert gpu_scoring_pairs_per_s("mc_dropout", {"T": 20}, "bf16") == pytest.approx(1023.3 / 2)
    assert gpu_scoring_pairs_per_s("ensemble", {"M": 10}, "fp32") == pytest.approx(2708.1 / 2)
    assert (
        gpu_scoring_pairs_per_s("platt", {}, "bf16")
        == gpu_scoring_pairs_per_s("someone's", {}, "bf16")
        == 14958.3
    )
    assert gpu_slowdown(2, 64) == 1.0 and gpu_slowdown(12, 256) == 4.0  # never faster than measured
    # six members five at once: two waves, the packed one slowed, each with its fixed cost
    assert _waves_s([10.0] * 6, 5) == pytest.approx(10 * 1.024 + 10 + 2 * GPU_COST["member_fixed_s"])
    assert _waves_s([5.0, 10.0, 20.0], 2) == pytest.approx(20 * 1.024 + 5 + 2 * GPU_COST["member_fixed_s"])


@pytest.mark.parametrize(
    ("resources", "at_once"),
    [
        ({"gpus_per_trial": 0.2}, 5),
        ({"gpus_per_trial": 0.3}, 3),
        ({"gpus_per_trial": 0.25, "max_concurrent_trials": 2}, 2),
        ({"gpus_per_trial": 1.0}, 1),
        ({}, 1),  # a grid that asks for no GPU: one member at a time
    ],
)
def test_members_at_once_on_one_gpu(resources, at_once):
    assert members_at_once(ResourcesConfig(**resources)) == at_once


def test_the_scoring_pass_pays_its_start_up_once_and_each_list_s_tokens_once():
    """The run's one scoring pass: the measured start-up once, a list tokenised once whatever reads
    it, each split's rows at its method's rate, its members' loading shared by the actors; BM25's
    splits (scored on an actor's CPU) and a pass of BM25 alone cost no GPU time."""
    load, fixed, rate = (float(SCORING_PER_SPLIT[name]["value"]) for name in SCORING_PER_SPLIT)
    bert = Scored("bert", {}, 6000, 1, "lists-a")
    ensemble = Scored("ensemble", {"M": 5}, 6000, 5, "lists-a")
    bm25 = Scored("bm25", {}, 6000, 0, "lists-b")
    rows = 6000 / 14958.3 + 6000 / 2760.2
    expected = GPU_COST["score_fixed_s"] + (fixed + 6000 / rate) + rows + 6 * load / 2
    assert scoring_seconds([bert, ensemble, bm25], 1.0, "bf16", actors=10) == pytest.approx(expected)
    assert scoring_seconds([bm25], 1.0, "bf16", actors=10) == 0.0
    # ten bert cells more add their rows and loading, not the start-up again
    more = scoring_seconds([bert] * 11, 1.0, "bf16", actors=10) - scoring_seconds(
        [bert], 1.0, "bf16", actors=10
    )
    assert more == pytest.approx(10 * 6000 / 14958.3 + (11 / 10 - 1) * load)
