"""The capacity arithmetic of bench.planning.capacity, against values worked out by hand."""

import re

import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.config.search_space import SearchConfig
from rankuq.bench.planning.capacity import (
    CPU_FORWARD_PASSES,
    describe,
    estimate,
    forward_gflop,
    scoring_cost,
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
    return float(re.search(r"estimated work left: ([\d.e+-]+) CPU-hours", text).group(1))


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
