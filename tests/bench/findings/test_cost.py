"""The cost claims (bench.findings.cost) on hand-made timings in method_cost's table."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import CLAIMS
from rankuq.bench.findings.verdicts import assess, judge_all


def cost_table(seconds: dict[str, list[float]]) -> pd.DataFrame:
    """method_cost's CSV: per method, its seconds in repeats 0, 1, 2 at MiniLM-L6."""
    labels = {"mc_dropout": "mc_dropout (T=10)", "ensemble": "ensemble (M=5)"}
    command = "python -m rankuq.bench.benchmarks.method_cost --out c.csv"
    setting = {"layers": 6, "pairs": 256, "threads": 1, "precision": "fp32", "command": command}
    return pd.DataFrame(
        {**setting, "method": method, "label": labels.get(method, method), "repeat": repeat, "seconds": value}
        for method, values in seconds.items()
        for repeat, value in enumerate(values)
    )


def test_the_cost_claims_compare_each_repeat_s_time_over_bert_s():
    claim = next(c for c in CLAIMS if c.id == "gp-cost-sngp-vs-mc_dropout")
    bert, sngp, mc = [1.0, 1.1, 0.9, 1.0], [1.1, 1.2, 1.0, 1.05], [11.0, 12.0, 10.0, 11.5]
    [row] = judge_all([assess(claim, [], cost_table({"bert": bert, "sngp": sngp, "mc_dropout": mc}))])
    (m,) = row.measured
    ratios, reference = np.divide(sngp, bert), np.divide(mc, bert)
    assert m.value == pytest.approx(ratios.mean()) and m.reference == pytest.approx(reference.mean())
    assert m.effect.d == pytest.approx(ratios.mean() - reference.mean())  # one "seed", repeats as queries
    assert m.effect.n_seeds == 1 and m.unit == "timed repeats"
    assert m.condition == "MiniLM-L6, 256 WikiQA test pairs, fp32; vs mc_dropout (T=10)"
    assert row.verdict == statistics.REPRODUCED and row.command.endswith("method_cost --out c.csv")
    # Dearer than the ensemble in every repeat: refuted; no file, or no timing of it: not measured.
    dear = replace(claim, id="vs-ensemble", against="ensemble")
    table = cost_table({"bert": bert, "sngp": [6.0, 6.7, 5.2, 6.1], "ensemble": [5.0, 5.6, 4.4, 5.2]})
    assert judge_all([assess(dear, [], table)])[0].verdict == statistics.REFUTED
    assert judge_all([assess(claim, [], None)])[0].verdict == statistics.NOT_MEASURED
    missing = judge_all([assess(claim, [], cost_table({"bert": bert, "sngp": sngp}))])[0]
    assert missing.verdict == statistics.NOT_MEASURED and "no timings of sngp and mc_dropout" in missing.note


def test_an_at_least_8x_claim_reads_the_other_method_s_time_over_the_gp_head_s():
    claim = next(c for c in CLAIMS if c.id == "gp-cost-gpf-8x-ensemble")
    gpf, ensemble = [1.0, 1.1, 0.9, 1.0], [10.0, 10.5, 9.8, 10.2]
    [row] = judge_all([assess(claim, [], cost_table({"gpf": gpf, "ensemble": ensemble, "bert": gpf}))])
    assert row.overall.d == pytest.approx(np.mean(np.divide(ensemble, gpf)))
    assert row.verdict == statistics.REPRODUCED  # about 10× in every repeat, above the floor of 8
