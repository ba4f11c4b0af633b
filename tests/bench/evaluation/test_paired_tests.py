import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from rankuq.bench import metrics
from rankuq.bench.evaluation.paired_tests import (
    bootstrap_p,
    randomisation_p,
    randomisation_ps,
    significance,
)
from rankuq.bench.predictions import PROBABILISTIC_KEY, predictions_table
from rankuq.bench.probes import calibration, scored_lists
from rankuq.bench.probes.calibration import query_parts
from rankuq.errors import RankuqError


def table(labels: list[list[int]], scores: list[list[float]]) -> pa.Table:
    """One query per list (q0, q1, …), a deterministic ranker's probabilities."""
    qid = [f"q{q}" for q, lab in enumerate(labels) for _ in lab]
    cid = [f"c{j}" for lab in labels for j in range(len(lab))]
    flat = np.array([[s] for query in scores for s in query])
    return predictions_table(qid, cid, np.concatenate(labels), flat, True)


def test_the_probes_see_whole_queries_with_a_relevant_candidate():
    lists = scored_lists(table([[0, 1], [0, 0], [2, 0, 0]], [[0.1, 0.9], [0.5, 0.4], [0.3, 0.2, 0.1]]))
    kept = lists.with_relevant()
    assert kept.qids.tolist() == ["q0", "q2"] and kept.length.tolist() == [2, 3]


def test_significance_is_a_paired_t_test_of_seed_averaged_per_query_values():
    labels = [[1, 0], [1, 0], [1, 0], [1, 0]]
    base = table(labels, [[0.9, 0.1], [0.1, 0.9], [0.1, 0.9], [0.1, 0.9]])  # R@1 per query: 1 0 0 0
    seed_a = table(labels, [[0.9, 0.1], [0.9, 0.1], [0.1, 0.9], [0.1, 0.9]])  # 1 1 0 0
    seed_b = table(labels, [[0.9, 0.1], [0.9, 0.1], [0.9, 0.1], [0.1, 0.9]])  # 1 1 1 0
    p = significance({"base": [base], "new": [seed_a, seed_b]}, "base", ["R@1"])
    expected = stats.ttest_rel([1, 1, 0.5, 0], [1, 0, 0, 0]).pvalue
    assert p == {"new": {"R@1": pytest.approx(expected, abs=1e-12)}}


def test_calibration_errors_split_by_query_add_up_to_the_probe_s_values():
    rng = np.random.default_rng(1)
    labels = (rng.random((30, 6)) < 0.3).astype(int)
    labels[:, 0] = 1
    lists = scored_lists(table(labels.tolist(), rng.random((30, 6)).tolist()))
    probe = calibration.probe(lists).metrics
    for name, (gaps, mass) in query_parts(lists).items():
        assert np.abs(gaps.sum(axis=0)).sum() / mass.sum() == pytest.approx(probe[name], abs=1e-12), name


def test_the_bootstrap_recomputes_ece_on_resampled_queries():
    """Against the definition: each resample's queries copied as often as drawn (same generator,
    seed and draw order), ECE recomputed through ``metrics.compute``; p from the percentile rule.
    Equal methods give p = 1; a method better on every resample 2/(R + 1)."""
    rng = np.random.default_rng(2)
    labels = (rng.random((8, 5)) < 0.4).astype(int)
    labels[:, 0] = 1
    base_scores, new_scores = rng.random((8, 5)), rng.random((8, 5))
    base, new = table(labels.tolist(), base_scores.tolist()), table(labels.tolist(), new_scores.tolist())
    resamples = 25
    counts = np.random.default_rng(0).multinomial(8, np.full(8, 1 / 8), size=resamples)

    def resampled(scores: np.ndarray, name: str, count: np.ndarray) -> float:
        drawn = np.repeat(np.arange(8), count)
        return metrics.compute(table(labels[drawn].tolist(), scores[drawn].tolist()), [name])[name]

    for name in ("ECE", "ECE.all"):
        delta = np.array([resampled(new_scores, name, c) - resampled(base_scores, name, c) for c in counts])
        expected = min(1, 2 * (min((delta <= 0).sum(), (delta >= 0).sum()) + 1) / (resamples + 1))
        parts = [query_parts(scored_lists(t))[name] for t in (new, base)]
        assert bootstrap_p([parts[0]], [parts[1]], resamples, seed=0) == pytest.approx(expected), name
    parts = query_parts(scored_lists(base))["ECE"]
    assert bootstrap_p([parts], [parts]) == 1.0
    calibrated = table(labels.tolist(), labels.astype(float).tolist())  # perfect 0/1 predictions
    assert bootstrap_p([query_parts(scored_lists(calibrated))["ECE"]], [parts]) == pytest.approx(2 / 1001)


def test_significance_tests_calibration_errors_by_bootstrap_and_ranking_by_t_test():
    labels = [[1, 0]] * 4
    base = table(labels, [[0.9, 0.1], [0.1, 0.9], [0.1, 0.9], [0.1, 0.9]])
    perfect = table(labels, [[1.0, 0.0]] * 4)
    p = significance({"base": [base], "new": [perfect]}, "base", ["R@1", "ECE", "ECE.all", "ERCE"])
    assert p["new"]["R@1"] == pytest.approx(stats.ttest_rel([1] * 4, [1, 0, 0, 0]).pvalue)
    assert p["new"]["ECE"] == p["new"]["ECE.all"] == p["new"]["ERCE"] == pytest.approx(2 / 1001)
    raw = table(labels, [[0.9, 0.1]] * 4).replace_schema_metadata({PROBABILISTIC_KEY: b"false"})
    names = ["ECE", "ERCE", "Brier", "NLL"]
    p = significance({"base": [base], "bm25": [raw]}, "base", names)
    assert all(np.isnan(p["bm25"][name]) for name in names)  # raw scores: none of them on the board
    p = significance({"bm25": [raw], "new": [perfect]}, "bm25", names)  # nor against a raw baseline
    assert all(np.isnan(p["new"][name]) for name in names)


def test_significance_refuses_methods_scored_on_different_queries():
    first = table([[1, 0], [1, 0]], [[0.9, 0.1], [0.1, 0.9]])
    other = table([[1, 0]], [[0.9, 0.1]])
    with pytest.raises(RankuqError, match="new and the baseline base scored different queries"):
        significance({"base": [first], "new": [other]}, "base", ["R@1"])


def test_randomisation_p_is_exact_on_few_queries():
    """Differences 0 1 1 0: of the 16 swaps, those flipping both non-zero differences alike keep
    |mean| = 0.5 (8 of 16), the others give 0, so p = 8/16."""
    assert randomisation_p(np.array([1.0, 1, 1, 0]), np.array([1.0, 0, 0, 0])) == pytest.approx(0.5)
    assert randomisation_p(np.ones(5), np.ones(5)) == 1.0  # no difference: no evidence


def test_randomisation_p_is_near_the_t_test_on_many_queries():
    rng = np.random.default_rng(3)
    a = rng.random(400)
    b = a - 0.02 + 0.2 * rng.normal(size=400)
    assert randomisation_p(a, b) == pytest.approx(stats.ttest_rel(a, b).pvalue, abs=0.01)


def test_randomisation_ps_equal_scipy_where_exact_and_do_not_depend_on_the_block():
    """On 9 queries every one of the 512 assignments is tried, as scipy's permutation_test does; drawn
    assignments are summed a block at a time, and any block gives the same p-values bit for bit."""
    rng = np.random.default_rng(9)
    a, b = rng.random(9), rng.random(9)
    theirs = stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples", vectorized=True
    ).pvalue
    assert randomisation_p(a, b) == theirs
    differences = rng.normal(size=(3, 700))
    whole = randomisation_ps(differences, resamples=2000, block=700 * 2000)
    assert all(np.array_equal(whole, randomisation_ps(differences, 2000, block=b)) for b in (1, 699, 7001))
    assert np.array_equal(whole[1:], randomisation_ps(differences[1:], 2000))  # the same draw per metric
