"""The capacity arithmetic of bench.planning.capacity, against values worked out by hand."""

import pytest

from rankuq.bench.config.resources import ResourcesConfig
from rankuq.bench.planning.capacity import (
    Scored,
    _waves_s,
    estimate,
    forward_gflop,
    gpu_scoring_pairs_per_s,
    gpu_slowdown,
    members_at_once,
    scoring_cost,
    scoring_seconds,
)
from rankuq.bench.planning.measured import CPU_FORWARD_PASSES, GPU_COST, SCORING_PER_SPLIT, value


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
