"""`rankuq run --plan`'s text (bench.planning.summary): a search's trials counted, and the GPU plan of
the grids the H100 record timed within 1.5× of their measured wall time."""

import json
import re
from pathlib import Path

import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.config.search_space import SearchConfig
from rankuq.bench.planning.measured import GPU_RECORD, MEASURED_TRAIN_PAIRS
from rankuq.bench.planning.plan import plan
from rankuq.bench.planning.summary import counts, describe, train_pair_epochs, trial_epochs
from rankuq.bench.rundir.layout import RunLayout

# the first H100 run as its benchmark wrote it (the plan reads the record made of it, GPU_RECORD)
RECORD = json.loads(
    (Path(__file__).resolve().parents[3] / "rankuq/records/data/2026-11-27-h100/gpu.json").read_text()
)


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


def measured_grid(methods: dict[str, dict]) -> dict:
    """The grid the record timed: rankuq/bench/benchmarks/gpu/packing.py's packing_grid at c99ffb5 (WikiQA,
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


def test_the_plan_gives_the_wall_time_of_its_cpu_hours_on_this_machines_cores(tmp_path, monkeypatch):
    """CPU-hours on one core are not what a user waits for: --plan also divides them by the cores
    (a gp rerun measured 1.37x and a paper002 run 0.71x that figure on 2 idle cores: the record
    2026-11-29-plan-check)."""
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    spec, params = parse_grid({"name": "g", "tasks": ["wikiqa"], "methods": {"bert": {}}, "seeds": [0]}, "g")
    text = describe(plan(spec, params, RunLayout(tmp_path / "run")))
    found = re.search(
        r"work left: ([\d.e+-]+) CPU-hours .*about ([\d.e+-]+) hours of wall time on this machine's 4 cores",
        text,
    )
    assert found, text
    assert float(found.group(2)) == pytest.approx(float(found.group(1)) / 4, rel=0.05)
