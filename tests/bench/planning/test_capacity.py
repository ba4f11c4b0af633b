"""The capacity arithmetic of bench.planning.capacity, against values worked out by hand."""

import pytest

from rankuq.bench.planning.capacity import CPU_FORWARD_PASSES, estimate, forward_gflop, scoring_cost, value


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
