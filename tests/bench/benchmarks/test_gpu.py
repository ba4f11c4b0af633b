"""The GPU benchmark's wiring on the CPU (--cpu --tiny): every part runs and reports what a GPU run
would, on the tiny random BERT through the suite's Ray session."""

import json
import sys
from pathlib import Path

import pytest

from rankuq.bench.benchmarks.gpu.measure import BARS, bars, main
from rankuq.bench.benchmarks.gpu.packing import most_at_once, span
from rankuq.bench.benchmarks.gpu.scoring import BOARD_METRICS, CASES
from rankuq.bench.findings.runs import read_cost


def test_spans_and_overlap_of_members() -> None:
    records = [{"started": 10.0, "reported": 14.0}, {"started": 11.0, "reported": 12.0}]
    records.append({"started": 13.0, "reported": 20.0})
    assert span(records) == 10.0
    assert most_at_once(records) == 2  # 10-14 overlaps 11-12, then 13-20; never all three


@pytest.mark.slow  # two grid runs through Ray: 22 min at load average 25-30 (2026-11-26), not measured idle
def test_the_benchmark_runs_end_to_end_on_the_cpu(
    ray_session: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setattr(sys, "argv", ["gpu", str(tmp_path), "--cpu", "--tiny"])
    main()
    result = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "gpu.json").read_text()) == result
    assert {p.name for p in tmp_path.iterdir()} == {
        "gpu.json",
        "gpu.log",
        "packing.png",
        "throughput.png",
        "method_cost.csv",
    }
    packing = result["packing"]
    assert packing["members"] == 5 and packing["devices"] == ["cpu"] and packing["gpus_per_trial"] == 0
    assert len(packing["spans"]["alone"]) == 1 and len(packing["spans"]["packed"]) == 5
    assert packing["plan"]["gpu_hours"] > 0 and packing["plan"]["measured_hours"] > 0
    for precision in ("fp32", "bf16"):
        cases = result["throughput"]["by_precision"][precision]
        assert list(cases) == [case.label for case in CASES]
        assert cases["bert"]["over_bert"] == 1.0
    # paper 004, Table 3: 7.87, 65.00 and 71.80 min over BERT's 6.80
    paper = result["throughput"]["papers"]["GPF-BERT 2023, Table 3"]
    assert paper == {"bert": 1.0, "mc_dropout": 9.56, "ensemble": 10.56, "gpf": 1.16}
    agreement = result["agreement"]
    gaps = agreement["max_abs_diff_vs_cpu_fp32"]
    assert gaps["cpu_fp32"] == 0.0  # the reference against itself
    assert 0 < gaps["cpu_bf16"] < 0.1  # bf16 rounds, a little
    assert set(agreement["metrics"]["cpu_bf16"]) == set(BOARD_METRICS)
    assert agreement["same_seed"]["max_abs_diff"] < 1e-5  # the same member trained alone and packed
    assert len(read_cost(tmp_path / "method_cost.csv")) == 2 * len(CASES)  # one timed repeat each
    assert set(result["bars"]) == set(BARS)  # every bar stated, met or not, on the CPU too


def test_the_record_states_every_bar_with_its_figure_and_goal() -> None:
    """The first H100 run's figures (rankuq/records/data/2026-11-27-h100/gpu.json; bert over the plain
    loop 15.0k /
    135.7k pairs/s), gpf's put at its bar: a bar is met at its goal."""
    bf16 = {"bert": {"pairs_per_s": 15_000.0}, "mc_dropout (T=10)": {"over_bert": 14.6}}
    bf16 |= {"sngp": {"over_bert": 2.2}, "gpf": {"over_bert": 1.3}}
    result = {
        "throughput": {"by_precision": {"bf16": bf16}, "plain_loop": {"bf16": {"bert_over_plain": 0.111}}},
        "packing": {"packed_over_alone": 1.02},
        "training": {"rankuq": {"pairs_per_s": 170.0}},
    }
    found = bars(result)
    assert found["bert_over_plain_bf16"] == {"figure": 0.111, "goal": "at least 0.7", "met": False}
    assert found["bert_pairs_per_s_bf16"] == {"figure": 15_000.0, "goal": "at least 100000", "met": False}
    assert found["gpf_over_bert_bf16"] == {
        "figure": 1.3,
        "goal": "at most 1.3",
        "met": True,
    }  # a bar is met at it
    assert [name for name, bar in found.items() if bar["met"]] == ["gpf_over_bert_bf16", "packed_over_alone"]
    assert found["training_pairs_per_s"]["goal"] == "at least 5000"


def test_an_output_path_that_is_a_file_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    given = tmp_path / "taken"
    given.write_text("")
    monkeypatch.setattr(sys, "argv", ["gpu", str(given)])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 2
