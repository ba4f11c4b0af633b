"""The cost claims (bench.findings.cost) on hand-made timings in method_cost's table: a GPU's
judged by an exact sign-flip test over its timed repeats (at least 10 of them), a CPU's shown as
forward-pass counts outside Benjamini–Hochberg."""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench import statistics
from rankuq.bench.cli.parser import build_parser
from rankuq.bench.findings.claims import CLAIMS, CPU
from rankuq.bench.findings.cost import DESCRIPTIVE, on_gpu
from rankuq.bench.findings.runs import read_costs
from rankuq.bench.findings.verdicts import assess, judge_all
from rankuq.errors import RankuqError

H100 = "NVIDIA H100 80GB HBM3"
DOCS = Path(__file__).resolve().parents[3] / "docs"
# the measurements behind the records
DATA = Path(__file__).resolve().parents[3] / "rankuq" / "records" / "data"


def cost_table(seconds: dict[str, list[float]], device: str | None = H100, pairs: int = 256) -> pd.DataFrame:
    """method_cost's CSV: per method, its seconds in repeats 0, 1, … at MiniLM-L6 on ``device`` (the
    "cpu" column; None: a file from before the column, timed on a CPU)."""
    labels = {"mc_dropout": "mc_dropout (T=10)", "ensemble": "ensemble (M=5)"}
    command = "python -m rankuq.bench.benchmarks.method_cost --out c.csv"
    setting = {"layers": 6, "pairs": pairs, "threads": 1, "precision": "fp32", "command": command}
    table = pd.DataFrame(
        {**setting, "method": method, "label": labels.get(method, method), "repeat": repeat, "seconds": value}
        for method, values in seconds.items()
        for repeat, value in enumerate(values)
    )
    return table if device is None else table.assign(cpu=device)


def ten(*values: float) -> list[float]:
    """Ten repeats' seconds: ``values`` in turn."""
    return [values[i % len(values)] for i in range(10)]


BERT, SNGP, MC = ten(1.0, 1.1, 0.9, 1.0), ten(1.1, 1.2, 1.0, 1.05), ten(11.0, 12.0, 10.0, 11.5)


def test_the_cost_claims_compare_each_repeat_s_time_over_bert_s():
    claim = next(c for c in CLAIMS if c.id == "gp-cost-sngp-vs-mc_dropout")
    [row] = judge_all([assess(claim, [], cost_table({"bert": BERT, "sngp": SNGP, "mc_dropout": MC}))])
    (m,) = row.measured
    ratios, reference = np.divide(SNGP, BERT), np.divide(MC, BERT)
    assert m.value == pytest.approx(ratios.mean()) and m.reference == pytest.approx(reference.mean())
    assert m.effect.d == pytest.approx(ratios.mean() - reference.mean())  # the repeats' paired mean
    assert isinstance(m.effect, statistics.RepeatTest) and m.effect.n == 10
    assert m.effect.p == pytest.approx(2 / 2**10)  # every repeat the paper's way: the exact test's floor
    assert m.unit == "timed repeats" and not m.descriptive
    assert (
        m.condition == f"{H100}, MiniLM-L6, 256 WikiQA test pairs, fp32, n = 10 repeats; vs mc_dropout (T=10)"
    )
    assert row.verdict == statistics.REPRODUCED and row.command.endswith("method_cost --out c.csv")
    assert "CPU" not in claim.text  # the GPU's timings are the evidence, not forward-pass counts
    # Dearer than the ensemble in every repeat: refuted; no file, or no timing of it: not measured.
    dear = replace(claim, id="vs-ensemble", against="ensemble")
    table = cost_table({"bert": BERT, "sngp": ten(6.0, 6.7, 5.2, 6.1), "ensemble": ten(5.0, 5.6, 4.4, 5.2)})
    assert judge_all([assess(dear, [], table)])[0].verdict == statistics.REFUTED
    assert judge_all([assess(claim, [], None)])[0].verdict == statistics.NOT_MEASURED
    missing = judge_all([assess(claim, [], cost_table({"bert": BERT, "sngp": SNGP}))])[0]
    assert missing.verdict == statistics.NOT_MEASURED and "no timings of sngp and mc_dropout" in missing.note


def test_an_at_least_8x_claim_reads_the_other_method_s_time_over_the_gp_head_s():
    claim = next(c for c in CLAIMS if c.id == "gp-cost-gpf-8x-ensemble")
    gpf, ensemble = ten(1.0, 1.1, 0.9, 1.0), ten(10.0, 10.5, 9.8, 10.2)
    [row] = judge_all([assess(claim, [], cost_table({"gpf": gpf, "ensemble": ensemble, "bert": gpf}))])
    assert row.overall.d == pytest.approx(np.mean(np.divide(ensemble, gpf)))
    assert row.verdict == statistics.REPRODUCED  # about 10× in every repeat, above the floor of 8


def test_the_cpu_column_tells_a_gpu_from_a_cpu():
    assert on_gpu(H100) and on_gpu("Tesla V100-SXM2-16GB")
    gpu = pd.read_csv(DATA / "2026-11-27-h100" / "method_cost.csv").cpu  # the GPU benchmark's
    assert set(gpu) == {H100}
    cpu = pd.read_csv(DATA / "method_cost-cpu.csv").cpu.iloc[0]  # method_cost's flag list
    assert cpu == "avx2" and not on_gpu(cpu)
    flags = ["avx2, avx512f, avx512_bf16, amx_bf16", "cpu", "flags unknown", "no AVX2", "avx2", ""]
    assert not any(map(on_gpu, flags))


def _files(tmp_path: Path) -> list[Path]:
    """A GPU's file and a CPU's, both holding bert, sngp, gpf, mc_dropout and the ensemble at MiniLM-L6."""
    gpu, cpu = tmp_path / "gpu.csv", tmp_path / "cpu.csv"
    tenfold, fivefold = [10 * b for b in BERT], [5 * b for b in BERT]
    timed = {"bert": BERT, "sngp": SNGP, "gpf": SNGP, "mc_dropout": MC, "ensemble": ten(9.0, 9.8, 8.2, 9.1)}
    cost_table(timed, pairs=2048).to_csv(gpu, index=False)
    counted = {"bert": BERT, "sngp": BERT, "gpf": BERT, "mc_dropout": tenfold, "ensemble": fivefold}
    cost_table(counted, device=None).to_csv(cpu, index=False)
    return [gpu, cpu]


def test_a_cpu_s_timings_are_shown_as_forward_pass_counts_and_change_no_adjusted_p(
    tmp_path, run_of, values, lower_ece
):
    gpu, cpu = _files(tmp_path)
    run = run_of(
        {
            ("c", "bert", "ECE"): [values(0.10, 0.05, s) for s in range(3)],
            ("c", "ensemble", "ECE"): [values(0.09, 0.05, 10 + s) for s in range(3)],
        }
    )
    claims = [c for c in CLAIMS if c.id in ("gp-cost-sngp-vs-mc_dropout", "gp-cost-gpf-8x-ensemble")]

    def judged(paths: list[Path]) -> list:
        cost = read_costs(paths)
        return judge_all([assess(lower_ece, [run]), *(assess(c, [run], cost) for c in claims)])

    alone, both = judged([gpu]), judged([gpu, cpu])
    for one, two in zip(alone, both, strict=True):  # the same BH family, the same estimates
        assert one.verdict == two.verdict and one.overall_adjusted_p == pytest.approx(
            two.overall_adjusted_p, nan_ok=True
        )
        adjusted = [m.adjusted_p for m in one.measured]
        assert [m.adjusted_p for m in two.measured if not m.descriptive] == pytest.approx(
            adjusted, nan_ok=True
        )
    row = both[1]
    judged_on_gpu, counted = row.measured
    assert judged_on_gpu.condition.startswith(f"{H100}, MiniLM-L6, 2,048 WikiQA test pairs, fp32, n = 10")
    assert judged_on_gpu.verdict == statistics.REPRODUCED and not judged_on_gpu.descriptive
    assert counted.descriptive and counted.verdict == DESCRIPTIVE and counted.note == CPU
    assert counted.note.startswith("forward-pass count") and np.isnan(counted.adjusted_p)
    assert counted.condition.startswith("a CPU, 1 thread, MiniLM-L6, 256 WikiQA test pairs, fp32")
    assert row.overall.d == pytest.approx(judged_on_gpu.effect.d)  # the GPU's alone
    assert row.command == "python -m rankuq.bench.benchmarks.method_cost --out c.csv"  # one, not twice
    # The CPU's file alone: shown, nothing judged.
    [only] = judge_all([assess(claims[0], [], read_costs([cpu]))])
    assert only.verdict == statistics.NOT_MEASURED and only.note.startswith(f"{CPU} only: not judged")
    assert only.measured[0].verdict == DESCRIPTIVE


def test_several_cost_files_are_read_and_a_bad_one_is_named_with_its_line(tmp_path):
    gpu, cpu = _files(tmp_path)
    assert read_costs([]) is None
    table = read_costs([gpu, cpu])
    assert table is not None and set(table.file) == {str(gpu), str(cpu)} and len(table) == 100
    bad = tmp_path / "bad.csv"
    broken = pd.read_csv(cpu).astype({"repeat": object})
    broken.loc[1, "repeat"] = "x"  # line 3: the header is line 1
    broken.to_csv(bad, index=False)
    with pytest.raises(RankuqError, match=f"^{bad}, line 3: repeat is 'x', expected a whole number"):
        read_costs([gpu, bad])
    arguments = build_parser().parse_args(["findings", "run", "--cost", str(gpu), "--cost", str(cpu)])
    assert arguments.cost == [gpu, cpu]


def test_a_timing_of_fewer_than_ten_repeats_is_untestable_and_says_n(tmp_path):
    """Five repeats, every one the paper's way: the exact test over them cannot give p below
    2 / 2⁵ = 0.0625, so no verdict is drawn; the claim reads untestable, "n = 5 < 10", and its rows
    name n. A bootstrap over the same five repeats would have called it p < 2e-04."""
    claim = next(c for c in CLAIMS if c.id == "gp-cost-sngp-vs-mc_dropout")
    five = {name: seconds[:5] for name, seconds in {"bert": BERT, "sngp": SNGP, "mc_dropout": MC}.items()}
    [row] = judge_all([assess(claim, [], cost_table(five))])
    (m,) = row.measured
    assert row.verdict == statistics.UNTESTABLE and m.failed.name == "repeats"
    assert row.note.startswith(
        "repeats: n = 5 < 10 timed repeats: the exact test over 5 repeats cannot give p"
    )
    assert m.effect.p == pytest.approx(2 / 2**5) and m.effect.p >= statistics.ALPHA
    assert ", n = 5 repeats" in m.condition
    assert math.isinf(m.effect.interval()[0])  # no 95 % interval from five repeats: unbounded
    # The same timings over ten repeats are judged.
    [row] = judge_all([assess(claim, [], cost_table({"bert": BERT, "sngp": SNGP, "mc_dropout": MC}))])
    assert row.verdict == statistics.REPRODUCED


def test_the_committed_cost_files_name_their_repeats():
    """The CSVs docs/ keeps: every condition says n; a file under 10 repeats judges nothing."""
    cost = read_costs([DATA / "2026-11-27-h100" / "method_cost.csv", DATA / "method_cost-cpu.csv"])
    claim = next(c for c in CLAIMS if c.id == "gp-cost-gpf-vs-ensemble")
    [row] = judge_all([assess(claim, [], cost)])
    for m in row.measured:
        n = m.effect.n
        assert f", n = {n} repeats" in m.condition
        if n < statistics.MIN_REPEATS and not m.descriptive:
            assert m.verdict == statistics.UNTESTABLE and m.failed.name == "repeats"
