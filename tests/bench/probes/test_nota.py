"""NOTA prediction: separable lists, the input spaces, too few NOTA queries, real WikiQA."""

import warnings

import numpy as np
import pyarrow as pa
import pytest
from sklearn.metrics import f1_score

from rankuq.bench.probes import ProbeResult, nota, scored_lists
from rankuq.bench.probes.nota import fold_f1_macro
from rankuq.bench.statistics.parts import QueryParts
from rankuq.errors import RankuqError


def separable(lists_table, n: int = 20):
    """q0…q{n−1}: NOTA queries (odd) score every candidate below 0.4, the others have one at
    0.9 or above; draws of the NOTA queries also spread more."""
    rng = np.random.default_rng(0)
    labels, draws = [], []
    for q in range(n):
        top = 0.3 if q % 2 else 0.9 + q / 1000
        spread = 0.2 if q % 2 else 0.01
        labels.append([0, 0, 0] if q % 2 else [1, 0, 0])
        draws.append([list(np.clip(m + spread * rng.normal(size=4), 0, 1)) for m in (top, 0.2, 0.1)])
    return lists_table(labels, draws)


def test_separable_lists_are_classified_perfectly(lists_table) -> None:
    result = nota.probe(separable(lists_table))
    assert result.metrics["NOTA.F1.mean"] == 1.0 and result.metrics["NOTA.F1.mean.std"] == 0.0
    assert 0.8 < result.metrics["NOTA.F1.mean_var"] <= 1.0  # 10 more, padded features to sample from
    assert 0 < result.metrics["NOTA.p_value"] <= 1
    assert result.curves["NOTA"]["fold"].tolist() == [0, 1, 2, 3, 4]


def test_a_deterministic_ranker_has_the_mean_input_space_only(scores_table) -> None:
    labels = [[1, 0] if q % 2 else [0, 0] for q in range(12)]
    scores = [[0.9, 0.1] if q % 2 else [0.3, 0.2] for q in range(12)]
    result = nota.probe(scores_table(labels, scores))
    assert set(result.metrics) == {"NOTA.F1.mean", "NOTA.F1.mean.std"}
    assert "S = 1" in result.notes[0]


def test_too_few_nota_queries_for_five_folds(scores_table) -> None:
    table = scores_table([[1, 0]] * 8 + [[0, 0]] * 4, [[0.9, 0.1]] * 12)
    with pytest.raises(
        RankuqError, match=r"at least 5 queries with and 5 without a relevant candidate .* has 8 and 4"
    ):
        nota.probe(table)


def sklearn_fold_f1(rows: np.ndarray) -> float:
    """The mean over the folds present of sklearn's F1-macro (default zero_division: a class
    never predicted has precision 0, with a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(
            np.mean(
                [
                    f1_score(rows[rows[:, 0] == f, 1], rows[rows[:, 0] == f, 2], average="macro")
                    for f in np.unique(rows[:, 0])
                ]
            )
        )


def test_fold_f1_macro_is_sklearn_s_f1_macro_per_fold() -> None:
    """Random folds, then the degenerate ones: a class never predicted (sklearn's zero_division),
    one class only and right (macro over one label: 1), one class predicted as the other (0), a
    class predicted but never true; and a resample with repeated rows and a fold left out."""
    rng = np.random.default_rng(0)
    for n in (7, 30, 200):
        rows = np.column_stack([rng.integers(0, 5, n), rng.random(n) < 0.3, rng.random(n) < 0.4])
        rows = rows.astype(np.float64)
        assert fold_f1_macro(rows) == sklearn_fold_f1(rows)
    degenerate = {
        "never predicted": [[0, 1, 0], [0, 0, 0], [0, 0, 0]],
        "one class, right": [[1, 0, 0], [1, 0, 0]],
        "all wrong": [[2, 1, 0], [2, 1, 0]],
        "predicted, never true": [[3, 0, 1], [3, 0, 0]],
    }
    for name, fold in degenerate.items():
        rows = np.array(fold, dtype=np.float64)
        assert fold_f1_macro(rows) == sklearn_fold_f1(rows), name
    by_hand = [0.4, 1.0, 0.0, 1 / 3]  # (0.8 + 0) / 2, 1, (0 + 0) / 2, (2/3 + 0) / 2
    assert [fold_f1_macro(np.array(f, dtype=np.float64)) for f in degenerate.values()] == by_hand
    every = np.array([row for fold in degenerate.values() for row in fold], dtype=np.float64)
    assert fold_f1_macro(every) == pytest.approx((0.4 + 1 + 0 + 1 / 3) / 4, rel=1e-15)
    resample = every[rng.integers(0, len(every), 40)]
    resample = resample[resample[:, 0] != 2]
    assert fold_f1_macro(resample) == sklearn_fold_f1(resample)


def check_parts(result: ProbeResult, qids: np.ndarray, nota_queries: np.ndarray) -> None:
    """Each space's F1 as rows [fold, truth, out-of-fold prediction] of every query."""
    spaces = {k for k in result.metrics if k.startswith("NOTA.F1.") and not k.endswith(".std")}
    assert set(result.parts) == spaces
    for name, part in result.parts.items():
        assert part.value() == pytest.approx(result.metrics[name], rel=1e-12), name
        assert part.statistic == "fold_f1_macro" and part.rows.shape == (qids.size, 3)
        np.testing.assert_array_equal(part.qids, qids)
        np.testing.assert_array_equal(part.rows[:, 1], nota_queries)
        assert np.unique(part.rows[:, 0]).tolist() == [0, 1, 2, 3, 4]


def test_real_wikiqa_nota_questions(wikiqa) -> None:
    """The parts give the metrics; on half the queries (kept in their folds, predicted by the same
    forests, which a rerun would refit on other folds) sklearn's fold F1 of those rows."""
    result = nota.probe(wikiqa, seed=2)
    assert 0.4 < result.metrics["NOTA.F1.mean"] < 1 and 0 <= result.metrics["NOTA.p_value"] <= 1
    lists = scored_lists(wikiqa)
    check_parts(result, lists.qids, nota.nota_labels(lists))
    for part in result.parts.values():
        half = QueryParts(part.qids[::2], part.rows[::2], part.statistic)
        assert half.value() == pytest.approx(sklearn_fold_f1(half.rows), rel=1e-12)


def cross_tables(lists_table, scores_table, n: int = 20):
    """The deterministic means rank c0 > c1 > c2 in every query, NOTA (odd) or not, so they cannot
    tell NOTA apart. The stochastic twin ranks c0 last, and only c0's draws differ: spread for NOTA
    queries, constant otherwise. Its rows are shuffled."""
    labels = [[0, 0, 0] if q % 2 else [1, 0, 0] for q in range(n)]
    means = scores_table(labels, [[0.6, 0.5, 0.4]] * n)
    c0 = [[0.0, 0.2, 0.1, 0.1], [0.1] * 4]
    draws = [[c0[q % 2 == 0], [0.5, 0.6, 0.5, 0.6], [0.9, 0.8, 0.9, 0.8]] for q in range(n)]
    stochastic = lists_table(labels, draws)
    return means, stochastic.take(np.random.default_rng(0).permutation(stochastic.num_rows))


def test_cross_method_input_takes_the_other_ranker_s_variance_of_the_same_candidates(
    lists_table, scores_table
) -> None:
    """k = 1: the means' top candidate is c0, whose variance in the other table separates NOTA
    perfectly (c0 of the other table's own top-1 would be c2, uninformative)."""
    means, stochastic = cross_tables(lists_table, scores_table)
    result = nota.cross_method(means, stochastic, k=1)
    assert result.metrics["NOTA.F1.mean_cross_var"] == 1.0
    assert result.metrics["NOTA.F1.mean"] < 0.7  # equal means in both classes
    assert result.metrics["NOTA.cross.p_value"] < 0.05
    assert set(result.metrics) == {
        "NOTA.F1.mean",
        "NOTA.F1.mean.std",
        "NOTA.F1.mean_cross_var",
        "NOTA.F1.mean_cross_var.std",
        "NOTA.cross.p_value",
    }
    lists = scored_lists(means)
    check_parts(result, lists.qids, nota.nota_labels(lists))


def test_cross_method_refuses_tables_that_do_not_match(lists_table, scores_table) -> None:
    means, stochastic = cross_tables(lists_table, scores_table)
    with pytest.raises(RankuqError, match=r"variances: no row for qid q\d+, cid c\d .*1 missing in all"):
        nota.cross_method(means, stochastic.slice(1))
    relabelled = stochastic.set_column(2, "label", pa.array(1 - stochastic["label"].to_numpy()))
    with pytest.raises(RankuqError, match=r"variances: qid q\d+, cid c\d has label \d there and \d in means"):
        nota.cross_method(means, relabelled)
    with pytest.raises(RankuqError, match=r"rows hold 1–1 draws; the cross-method input needs"):
        nota.cross_method(means, means)
