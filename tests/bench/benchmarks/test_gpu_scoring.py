"""The GPU benchmark's scoring throughput on the CPU (the tiny random BERT): rankuq's scorer of every
case and the plain loop timed in the same run, bert's share of the loop, and the tokeniser's rate."""

import torch

from rankuq.backbone import TINY, ModelConfig
from rankuq.bench.benchmarks.gpu.scoring import CASES, PLAIN_BATCH, throughput


def test_throughput_times_rankuq_s_scorer_beside_the_plain_loop() -> None:
    result = throughput(ModelConfig(backbone=TINY, max_length=32), torch.device("cpu"), 40, 1)
    assert result["pairs"] == 40 and result["batch"] == 64  # the CPU's forward passes
    for precision in ("fp32", "bf16"):
        cases = result["by_precision"][precision]
        assert list(cases) == [case.label for case in CASES]
        assert cases["bert"]["over_bert"] == 1.0
        assert all(case["pairs_per_s"] > 0 and len(case["seconds"]) == 1 for case in cases.values())
        plain = result["plain_loop"][precision]
        assert plain["bert_over_plain"] > 0 and plain["pairs_per_s"] > 0
        assert 0 < plain["bert_with_tokenization_pairs_per_s"] < cases["bert"]["pairs_per_s"]
    assert result["plain_loop"]["batch"] == PLAIN_BATCH
    assert result["tokenize"]["pairs_per_s"] > 0
