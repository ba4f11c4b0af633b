"""The training benchmark's wiring on the CPU: rankuq's epoch and the plain loop on the same pairs."""

import torch

from rankuq.backbone import TINY, ModelConfig
from rankuq.bench.benchmarks.gpu.training import NEGATIVES, training, training_pairs


def test_the_pairs_are_a_members_wikiqa_pairs():
    pairs = training_pairs(50)
    assert len(pairs) == 50 and {label for _, _, label in pairs} == {0, 1}
    relevant = sum(label for _, _, label in training_pairs(None))
    assert len(training_pairs(None)) <= relevant * (1 + NEGATIVES)


def test_rankuq_and_the_plain_loop_train_the_same_pairs_and_report_their_ratio():
    result = training(ModelConfig(backbone=TINY, max_length=32), torch.device("cpu"), limit=40, batch_size=8)
    assert result["pairs"] == 40
    for side in ("rankuq", "plain loop"):
        assert result[side]["seconds"] > 0 and result[side]["pairs_per_s"] > 0
    plain = result["plain loop"]
    assert plain["pairs_per_s_without_tokenizing"] >= plain["pairs_per_s"]
    assert result["rankuq_over_plain"] > 0 and result["goal_pairs_per_s"] == 5000
    profile = result["profile"]
    assert profile["steps"] == 5 and profile["top_host"] and profile["top_device"] == []
    assert {"op", "calls", "self_cpu_ms", "self_device_ms"} == set(profile["top_host"][0])
    # bool(padding_mask.all()) in transformers' masking, once per forward (issue 40's remaining sync)
    assert profile["host_reads_per_step"].get("aten::is_nonzero", 0) <= 1  # none of rankuq's own
