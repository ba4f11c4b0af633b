"""Ranking metrics equal ir-measures (pytrec_eval) per query: ties, short lists, no relevant."""

import gzip
import os
import re
from pathlib import Path

import ir_measures
import numpy as np
import pyarrow as pa
import pytest

from rankuq.bench import metrics
from rankuq.errors import RankuqError

NAMES = [
    "R@1", "R@5", "R@10", "P@1", "P@5", "P@10", "AP", "AP@5", "RR", "nDCG", "nDCG@5", "nDCG@10",
]  # fmt: skip
DATA = Path(os.environ.get("RANKUQ_DATA", Path(__file__).resolve().parents[4] / "shared" / "data"))


def table_of(qid: list[str], cid: list[str], label: list[int], score: list[float]) -> pa.Table:
    """The columns of a predictions table that metrics read; scores kept exactly (float64)."""
    return pa.table(
        {
            "qid": pa.array(qid, pa.string()),
            "cid": pa.array(cid, pa.string()),
            "label": pa.array(label, pa.int8()),
            "prob_mean": pa.array(score, pa.float64()),
        }
    )


def random_table(seed: int, n_queries: int = 60) -> pa.Table:
    """Graded labels 0–3, lists of 1–30, scores on a coarse grid (ties, -0.0 beside 0.0),
    docnos whose byte order differs from their numeric order, every 5th query with nothing
    relevant, rows shuffled across queries."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 31, n_queries)
    qid = np.repeat([f"q{i}" for i in range(n_queries)], sizes)
    cid = [f"{rng.choice(['d', 'D', 'doc-', 'é'])}{j}" for size in sizes for j in range(size)]
    label = rng.choice(4, qid.size, p=[0.6, 0.2, 0.1, 0.1])
    label[np.isin(qid, [f"q{i}" for i in range(0, n_queries, 5)])] = 0
    levels = [2, 5, 1000][seed % 3]
    score = rng.integers(-levels, levels + 1, qid.size) / levels
    score[(score == 0) & (rng.random(qid.size) < 0.5)] = -0.0
    perm = rng.permutation(qid.size)
    return table_of(qid[perm].tolist(), [cid[i] for i in perm], label[perm].tolist(), score[perm].tolist())


def rows(table: pa.Table, *columns: str) -> list[tuple]:
    return list(zip(*(table[c].to_pylist() for c in columns), strict=True))


def reference(
    table: pa.Table, names: list[str], qrels: pa.Table | None = None
) -> dict[str, dict[str, float]]:
    """ir-measures' per-query values {name: {qid: value}}; the table is the qrels by default."""
    judged = table if qrels is None else qrels
    qrel_rows = [ir_measures.Qrel(*row) for row in rows(judged, "qid", "cid", "label")]
    run = [ir_measures.ScoredDoc(*row) for row in rows(table, "qid", "cid", "prob_mean")]
    values: dict[str, dict[str, float]] = {name: {} for name in names}
    for metric in ir_measures.iter_calc(map(ir_measures.parse_measure, names), qrel_rows, run):
        values[str(metric.measure)][metric.query_id] = metric.value
    return values


def assert_matches(table: pa.Table, names: list[str], qrels: pa.Table | None = None) -> None:
    """Per-query values and means equal ir-measures to 1e-9."""
    expected = reference(table, names, qrels)
    qids, ours = metrics.per_query(table, names, qrels=qrels)
    means = metrics.compute(table, names, qrels=qrels)
    for name in names:
        assert sorted(expected[name]) == qids.tolist()
        want = np.array([expected[name][q] for q in qids])
        np.testing.assert_allclose(ours[name], want, rtol=0, atol=1e-9, err_msg=name)
        assert means[name] == pytest.approx(want.mean(), abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_random_runs_match_ir_measures(seed: int) -> None:
    assert_matches(random_table(seed), NAMES)


def test_wikiqa_word_overlap_run_matches_ir_measures() -> None:
    """The real WikiQA test split scored by question/sentence word overlap (many ties)."""
    with gzip.open(DATA / "wikiqa" / "WikiQA-test.tsv.gz", "rt", encoding="utf-8") as f:
        header, *rows = [line.rstrip("\r").split("\t") for line in f.read().split("\n") if line]
    col = {name: i for i, name in enumerate(header)}
    assert len(rows) == 6165
    question, sentence = col["Question"], col["Sentence"]
    table = table_of(
        [r[col["QuestionID"]] for r in rows],
        [r[col["SentenceID"]] for r in rows],
        [int(r[col["Label"]]) for r in rows],
        [len(set(r[question].lower().split()) & set(r[sentence].lower().split())) for r in rows],
    )
    assert_matches(table, NAMES)


def test_ties_rank_by_docno_descending_whatever_the_row_order() -> None:
    """trec_eval's rule: equal scores (-0.0 == 0.0) rank by docno descending in byte order."""
    table = table_of(
        ["q"] * 4 + ["r"] * 3,
        ["a", "c", "b", "z", "d9", "d10", "D99"],
        [1, 0, 0, 0, 1, 0, 0],
        [0.5, 0.5, 0.5, 0.1, 0.0, -0.0, 0.0],
    )
    # q ranks c, b, a; r ranks d9, d10, D99.
    expected = {"RR": [1 / 3, 1.0], "P@1": [0.0, 1.0], "AP": [1 / 3, 1.0]}
    for rows in (table, table.take(np.arange(7)[::-1])):
        qids, values = metrics.per_query(rows, list(expected))
        assert qids.tolist() == ["q", "r"]
        for name, want in expected.items():
            np.testing.assert_allclose(values[name], want, rtol=0, atol=1e-12)


def test_qrels_set_the_queries_and_relevant_counts_as_in_ir_measures() -> None:
    """Extra qrels queries score 0, unjudged table queries are ignored, and relevant documents
    missing from the table still count (R@k, AP, nDCG ideal)."""
    table = random_table(7, n_queries=30)
    qid, cid, label = (table[c].to_pylist() for c in ("qid", "cid", "label"))
    judged = [i for i, q in enumerate(qid) if q != "q3"]  # q3: in the run only
    qrels = table_of(
        [qid[i] for i in judged] + ["q1", "q2", "q2", "q-extra"],
        [cid[i] for i in judged] + ["missed", "missed", "missed-0", "x"],
        [label[i] for i in judged] + [2, 1, 0, 1],
        [0.0] * (len(judged) + 4),
    )
    assert_matches(table, NAMES, qrels=qrels)


def test_drop_queries_without_relevant_averages_over_the_rest() -> None:
    table = random_table(3)
    expected = reference(table, NAMES)
    qids, _ = metrics.per_query(table, NAMES, drop_queries_without_relevant=True)
    relevant = np.array(table["label"].to_pylist()) > 0
    assert qids.tolist() == sorted(set(np.array(table["qid"].to_pylist())[relevant]))
    means = metrics.compute(table, NAMES, drop_queries_without_relevant=True)
    for name in NAMES:
        want = np.mean([expected[name][q] for q in qids])
        assert means[name] == pytest.approx(want, abs=1e-9)


def test_metric_names_parse_as_ir_measures_spells_them() -> None:
    metric = metrics.get("nDCG@10")
    assert (metric.family.name, metric.k) == ("nDCG", 10)
    assert metrics.get("AP").k is None
    assert set(metrics.DEFAULT_METRICS) <= {str(ir_measures.parse_measure(n)) for n in NAMES}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "MAPS",
            "unknown metric 'MAPS'; valid metric families: AP[@k], Brier, ECE, ECE.all, NLL, P@k, R@k, RR, "
            "nDCG[@k], or a measure of ir-measures (e.g. RR@10",
        ),
        ("ndcg@10", "unknown metric 'ndcg@10'"),
        ("P", "'P' needs a cutoff, e.g. 'P@10'"),
        ("MAP", "metric 'MAP': write 'AP', ir-measures' own name for it"),
        ("ERR", "metric 'ERR': no installed ir-measures provider computes it as written"),
        ("RR@0", "metric 'RR@0': no installed ir-measures provider computes it as written"),
        ("nDCG@0", "positive integer"),
        ("R@five", "positive integer"),
    ],
)
def test_bad_metric_names_are_refused(name: str, message: str) -> None:
    with pytest.raises(RankuqError, match=re.escape(message)):
        metrics.compute(random_table(0), [name])


def test_per_query_refuses_pooled_metrics() -> None:
    with pytest.raises(RankuqError, match=r"\['ECE'\] pool all candidates.*use compute"):
        metrics.per_query(random_table(0), ["AP", "ECE"])


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("prob_mean", float("nan"), r"row 2 \(qid q, cid c\): score is nan"),
        ("prob_mean", float("inf"), r"row 2 \(qid q, cid c\): score is inf"),
        ("label", -1, r"row 2 \(qid q, cid c\): label -1 is outside 0..127"),
        ("qid", None, r"row 2: qid is missing"),
    ],
)
def test_bad_rows_are_named(column: str, value: object, message: str) -> None:
    table = table_of(["q"] * 3, ["a", "b", "c"], [1, 0, 0], [0.3, 0.2, 0.1])
    values = table[column].to_pylist()
    values[2] = value
    table = table.set_column(table.column_names.index(column), column, pa.array(values, table[column].type))
    with pytest.raises(RankuqError, match=message):
        metrics.compute(table, ["AP"], source="preds.parquet")


def test_empty_and_relevant_free_tables_are_refused() -> None:
    with pytest.raises(RankuqError, match="preds: no rows"):
        metrics.compute(table_of([], [], [], []), ["AP"], source="preds")
    with pytest.raises(RankuqError, match="missing prediction columns"):
        metrics.compute(random_table(0).drop_columns(["label"]), ["AP"])
    nothing_relevant = table_of(["q", "q"], ["a", "b"], [0, 0], [0.5, 0.2])
    assert metrics.compute(nothing_relevant, ["AP", "nDCG@10"]) == {"AP": 0.0, "nDCG@10": 0.0}
    with pytest.raises(RankuqError, match="no query has a relevant candidate"):
        metrics.compute(nothing_relevant, ["AP"], drop_queries_without_relevant=True)
