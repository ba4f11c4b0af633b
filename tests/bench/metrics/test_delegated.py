"""Measures the core lacks are ir-measures' own: worked values on the worked lists, and RR@10 (MS MARCO's
MRR@10) equal to ir-measures on the real WikiQA test split."""

import ir_measures
import numpy as np
import pyarrow as pa
import pytest

from rankuq.bench import metrics
from rankuq.bench.predictions import predictions_table
from rankuq.errors import RankuqError

# The worked lists (conftest): q1 ranks labels 0 1 0 1, q2 ranks 2 0 1, q3 ranks 0 0.
ROWS = [
    ("q1", "a", 0, 0.9), ("q1", "b", 1, 0.8), ("q1", "c", 0, 0.7), ("q1", "d", 1, 0.6),
    ("q2", "a", 2, 0.9), ("q2", "b", 0, 0.5), ("q2", "c", 1, 0.1),
    ("q3", "a", 0, 0.3), ("q3", "b", 0, 0.2),
]  # fmt: skip


def worked_table() -> pa.Table:
    qid, cid, label, score = zip(*ROWS, strict=True)
    return predictions_table(list(qid), list(cid), np.array(label), np.array(score)[:, None])


@pytest.mark.parametrize(
    ("name", "per_query"),
    [
        ("RR@1", [0, 1, 0]),  # q1's first relevant is at rank 2
        ("RR@2", [1 / 2, 1, 0]),
        ("P(rel=2)@3", [0, 1 / 3, 0]),  # only q2's 'a' has grade 2
        ("AP(rel=2)", [0, 1, 0]),
        ("Rprec", [1 / 2, 1 / 2, 0]),  # P@R: R = 2 for q1 (ranks 0 1) and q2 (ranks 2 0)
        # gdeval: R_g = (2^g − 1) / 2^4; q1: (1/16)/2 + (15/16)(1/16)/4; q2: (3/16)/1 + (13/16)(1/16)/3;
        # gdeval prints 5 decimals
        ("ERR@4", [1 / 32 + 15 / 1024, 3 / 16 + 13 / 768, 0]),
    ],
)
def test_delegated_measures_have_their_worked_values(name: str, per_query: list[float]) -> None:
    atol = 5e-6 if name.startswith("ERR") else 1e-12
    qids, values = metrics.per_query(worked_table(), [name])
    assert qids.tolist() == ["q1", "q2", "q3"]
    np.testing.assert_allclose(values[name], per_query, atol=atol)
    assert metrics.compute(worked_table(), [name])[name] == pytest.approx(np.mean(per_query), abs=atol)


def test_judged_counts_the_qrels_documents_and_missing_queries_score_zero() -> None:
    """With qrels that judge only q1's a and b and q4 (which the run lacks): Judged@2 is 1 for q1,
    0 for q4; q2, q3 are not qrels queries, so they are not evaluated."""
    qrels = pa.table({"qid": ["q1", "q1", "q4"], "cid": ["a", "b", "x"], "label": [0, 1, 1]})
    qids, values = metrics.per_query(worked_table(), ["Judged@2", "RR@10"], qrels=qrels)
    assert qids.tolist() == ["q1", "q4"]
    assert values["Judged@2"].tolist() == [1.0, 0.0]
    assert values["RR@10"].tolist() == [0.5, 0.0]


def test_delegated_and_core_names_mix_in_one_call() -> None:
    values = metrics.compute(worked_table(), ["RR", "RR@2", "AP"])
    assert values == pytest.approx({"RR": (1 / 2 + 1) / 3, "RR@2": (1 / 2 + 1) / 3, "AP": values["AP"]})
    assert list(values) == ["RR", "RR@2", "AP"]


def test_a_delegated_measure_is_not_computed_from_label_matrices() -> None:
    with pytest.raises(RankuqError, match=r"is ir-measures.; compute it with metrics\.compute"):
        metrics.get("RR@10")(None)  # type: ignore[arg-type]


def test_rr_at_10_equals_ir_measures_on_wikiqa(wikiqa: pa.Table) -> None:
    """MRR@10 of the real WikiQA test split (633 questions, a stand-in ranker's scores), each query's
    value, against ir-measures on the same run and qrels."""
    run = [
        ir_measures.ScoredDoc(q, c, s)
        for q, c, s in zip(
            wikiqa["qid"].to_pylist(), wikiqa["cid"].to_pylist(), wikiqa["prob_mean"].to_pylist(), strict=True
        )
    ]
    qrels = [
        ir_measures.Qrel(q, c, int(label))
        for q, c, label in zip(
            wikiqa["qid"].to_pylist(), wikiqa["cid"].to_pylist(), wikiqa["label"].to_pylist(), strict=True
        )
    ]
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.RR @ 10], qrels, run)}
    qids, values = metrics.per_query(wikiqa, ["RR@10"])
    assert len(qids) == 633 and 0 < values["RR@10"].mean() < 1
    np.testing.assert_array_equal(values["RR@10"], [expected[q] for q in qids])
    aggregate = ir_measures.calc_aggregate([ir_measures.RR @ 10], qrels, run)[ir_measures.RR @ 10]
    assert metrics.compute(wikiqa, ["RR@10"])["RR@10"] == pytest.approx(aggregate, abs=1e-15)
