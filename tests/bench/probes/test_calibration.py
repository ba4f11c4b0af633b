"""Calibration probe: adaptive ECE, ERCE and the #non-relevant sweep against hand-computed values."""

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from scipy.special import expit

from rankuq.bench import metrics
from rankuq.bench.metrics.ece import bin_index, expected_calibration_error
from rankuq.bench.probes import calibration, scored_lists
from rankuq.bench.probes.calibration import (
    ece_by_negatives,
    expected_ranking_calibration_error,
    pair_probabilities,
    subsample_negatives,
)
from rankuq.bench.statistics.parts import QueryParts
from rankuq.errors import RankuqError


def test_adaptive_bins_hold_equal_mass_and_never_split_ties() -> None:
    np.testing.assert_array_equal(bin_index(np.array([0.9, 0.1, 0.4, 0.3]), 2, adaptive=True), [1, 0, 1, 0])
    # edges at ranks 1 and 3 of [0.2, 0.5, 0.5, 0.5, 0.7]: 0.5 and 0.5 → the tied block joins bin 2
    np.testing.assert_array_equal(
        bin_index(np.array([0.5, 0.2, 0.5, 0.7, 0.5]), 3, adaptive=True), [2, 0, 2, 2, 2]
    )


def test_equal_width_bins_match_a_binary_search_over_the_edges_at_every_edge() -> None:
    """The arithmetic shortcut (⌊v·10⌋ corrected by one step) against the definition, on the
    edges, one ulp either side of them, and 0 and 1."""
    edges = np.arange(11) / 10
    values = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, 1), np.arange(1001) / 1000])
    values = values[(values >= 0) & (values <= 1)]
    expected = np.minimum(np.searchsorted(edges, values, side="right") - 1, 9)
    np.testing.assert_array_equal(bin_index(values), expected)


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(0).random(5000),
        np.round(np.random.default_rng(1).random(5000), 2),  # ties on every edge
        np.r_[np.full(900, 1.0), np.random.default_rng(2).random(100)],  # saturated
        np.r_[np.zeros(7), np.ones(7)],
        np.full(9, 0.3),
        np.array([0.5, 0.2]),
        5 + 1e-12 * np.random.default_rng(3).normal(size=999),  # a tiny spread
        np.array([5e-324, 0.0, 1e-323]),  # too small to scale
    ],
)
def test_adaptive_bins_equal_a_partition_and_binary_search(values: np.ndarray) -> None:
    """The histogram shortcut against the definition: edges = the values at ranks ⌊b·n/C⌋,
    bin = the number of edges <= the value."""
    for n_bins in (2, 10, 20):
        ranks = np.arange(1, n_bins) * values.size // n_bins
        expected = np.searchsorted(np.partition(values, ranks)[ranks], values, side="right")
        np.testing.assert_array_equal(bin_index(values, n_bins, adaptive=True), expected)


def test_adaptive_ece_differs_from_equal_width_when_bins_disagree() -> None:
    scores, relevant = np.array([0.1, 0.2, 0.8, 0.9]), np.array([1.0, 0.0, 0.0, 1.0])
    # equal width: each score alone, gaps 0.9 + 0.2 + 0.8 + 0.1
    assert expected_calibration_error(scores, relevant) == pytest.approx(2.0 / 4)
    # two equal-mass bins {0.1, 0.2} and {0.8, 0.9}: gaps |0.3 − 1| and |1.7 − 1|
    assert expected_calibration_error(scores, relevant, 2, adaptive=True) == pytest.approx(1.4 / 4)


def test_erce_of_a_deterministic_ranker_uses_the_pairwise_softmax_of_logits(scores_table) -> None:
    """Pairs (0.9 | 0.1, 0.2, 0.3) and (0.8, 0.7 | 0.1): P = p(1−q) / (p(1−q) + q(1−p)), every
    preferred order right, so ERCE = mean(1 − P)."""
    lists = scored_lists(scores_table([[1, 0, 0, 0], [1, 1, 0]], [[0.9, 0.1, 0.2, 0.3], [0.8, 0.7, 0.1]]))
    pairs = [(0.9, 0.1), (0.9, 0.2), (0.9, 0.3), (0.8, 0.1), (0.7, 0.1)]
    expected = [p * (1 - q) / (p * (1 - q) + q * (1 - p)) for p, q in pairs]
    np.testing.assert_allclose(sorted(pair_probabilities(lists)), sorted(expected))
    erce, _, outcome = expected_ranking_calibration_error(lists)
    assert erce == pytest.approx(np.mean([1 - p for p in expected]))
    assert outcome.tolist() == [1.0] * 5


def test_a_wrong_preference_counts_as_a_miss(scores_table) -> None:
    """P = 0.2 for the only pair: the model prefers the non-relevant candidate with confidence
    0.8 and is wrong, so ERCE = 0.8; raw scores use σ(s_i − s_j)."""
    lists = scored_lists(scores_table([[1, 0]], [[0.2, 0.5]]))
    p = 0.2 * 0.5 / (0.2 * 0.5 + 0.5 * 0.8)
    assert expected_ranking_calibration_error(lists)[0] == pytest.approx(1 - p)
    raw = scored_lists(scores_table([[1, 0]], [[3.0, 1.0]], probabilistic=False))
    assert expected_ranking_calibration_error(raw)[0] == pytest.approx(1 - expit(2.0))


def test_erce_of_draws_is_the_mean_pairwise_softmax_over_paired_draws(lists_table) -> None:
    """One estimator for every ranker (paper 001's pairwise softmax, averaged over draws paired
    by index). q0: relevant draws (0.8, 0.5), non-relevant (0.5, 0.5): σ terms 0.8 and ½, so
    P = 0.65 (a vote fraction would say 0.75). q1: (0.9, 0.6) against (0.4, 0.7): σ terms
    0.54/0.58 and 0.18/0.46, P = 0.661169 (votes: ½). Both preferred orders right, so
    ERCE = mean(1 − P) over the two pairs, each alone in its adaptive bin."""
    table = lists_table([[1, 0], [1, 0]], [[[0.8, 0.5], [0.5, 0.5]], [[0.9, 0.6], [0.4, 0.7]]])
    lists = scored_lists(table)
    first, second = 0.65, (0.54 / 0.58 + 0.18 / 0.46) / 2
    np.testing.assert_allclose(sorted(pair_probabilities(lists)), [first, second], rtol=1e-6)
    result = calibration.probe(table)
    assert result.metrics["ERCE"] == pytest.approx((1 - first + 1 - second) / 2, rel=1e-6)
    assert result.curves["ERCE"]["accuracy"].tolist() == [1.0, 1.0]
    separated = lists_table([[1, 0]], [[[1.0, 1.0], [0.0, 0.0]]])
    assert calibration.probe(separated).metrics["ERCE"] == 0.0
    assert calibration.probe(lists_table([[1, 0]], [[[1.0], [0.0]]])).metrics["ERCE"] == 0.0


def test_a_deterministic_ranker_and_its_stochastic_twin_get_the_same_erce(lists_table) -> None:
    """The issue's bar: lists of 10 candidates with logits z ~ N(0, 2²) and labels ~ Bernoulli(σ(z));
    the deterministic ranker scores σ(z), its twin 10 draws σ(z + 0.5·ε). Their ERCE is within
    0.03 (the vote fraction gave 0.018 against 0.113)."""
    rng = np.random.default_rng(0)
    n_queries, width = 1000, 10
    logits = rng.normal(0, 2, (n_queries, width))
    labels = (rng.random(logits.shape) < expit(logits)).astype(int)
    deterministic = lists_table(labels.tolist(), expit(logits)[..., None].tolist())
    draws = expit(logits[..., None] + 0.5 * rng.standard_normal((n_queries, width, 10)))
    twin = lists_table(labels.tolist(), draws.tolist())
    erce = calibration.probe(deterministic).metrics["ERCE"]
    twin_erce = calibration.probe(twin).metrics["ERCE"]
    assert erce < 0.05 and abs(erce - twin_erce) <= 0.03


def test_no_pair_to_compare_is_an_error(scores_table) -> None:
    lists = scored_lists(scores_table([[1, 1], [0, 0]], [[0.9, 0.1], [0.2, 0.3]]))
    with pytest.raises(RankuqError, match="no query has both a relevant and a non-relevant candidate"):
        expected_ranking_calibration_error(lists)


def test_negative_subsamples_are_nested_and_seeded(scores_table) -> None:
    table = scores_table(
        [[1, 0, 0, 0, 0], [0, 1, 0], [1, 1, 0]], [[0.9, 0.1, 0.2, 0.3, 0.4], [0.2, 0.8, 0.3], [0.9, 0.8, 0.1]]
    )
    lists = scored_lists(table)
    one, two = subsample_negatives(lists, 1, seed=5), subsample_negatives(lists, 2, seed=5)
    assert (one[2], two[2]) == (2, 2)  # q2 has two relevant candidates: left out
    assert set(one[0]) <= set(two[0]) and len(two[0]) == 6
    assert np.array_equal(subsample_negatives(lists, 2, seed=5)[0], two[0])
    assert two[3].tolist() == [0, 0, 0, 1, 1, 1]  # the query of each kept candidate
    assert subsample_negatives(lists, 4, seed=0)[2] == 1  # only q0 has 4 non-relevant
    with pytest.raises(RankuqError, match=r"at least 5 non-relevant candidates \(at most 4\)"):
        subsample_negatives(lists, 5)


def test_ece_grows_with_the_number_of_negatives_as_computed_by_hand(scores_table) -> None:
    """Relevant at 0.9, every non-relevant at 0.3: ECE = (0.1 + 0.3·k) / (k + 1)."""
    table = scores_table([[1, 0, 0, 0], [0, 0, 1, 0]], [[0.9, 0.3, 0.3, 0.3], [0.3, 0.3, 0.9, 0.3]])
    values = ece_by_negatives(table, (1, 2, 3))
    assert values == pytest.approx({k: (0.1 + 0.3 * k) / (k + 1) for k in (1, 2, 3)}, abs=1e-7)


def test_the_probe_on_real_wikiqa(wikiqa, tmp_path: Path) -> None:
    result = calibration.probe(wikiqa, seed=1)
    assert set(result.metrics) == {
        "ECE",
        "ECE.all",
        "ECE.adaptive",
        "ERCE",
        "ECE.nonrel_1",
        "ECE.nonrel_2",
        "ECE.nonrel_5",
        "ECE.nonrel_9",
        "Brier",
        "NLL",
    }
    assert result.metrics["ECE"] == metrics.compute(wikiqa, ["ECE"])["ECE"]  # the metric, same queries
    assert result.metrics["ECE.all"] == metrics.compute(wikiqa, ["ECE.all"])["ECE.all"]
    assert 0 < result.metrics["ERCE"] < 0.5 and result.notes == ()
    assert result.curves["ECE.nonrel"]["queries"][0] > result.curves["ECE.nonrel"]["queries"][-1] > 0
    paths = result.write_plots(tmp_path)
    assert {p.name for p in paths} == {
        "reliability.png",
        "reliability_adaptive.png",
        "reliability_ERCE.png",
        "reliability_by_nonrel.png",
    }
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in paths)


def test_the_parts_give_the_metrics_on_real_wikiqa_and_on_half_its_queries(wikiqa) -> None:
    """Every metric but ECE.adaptive split by query, one row per query ([10 bin gaps, mass]); the
    sweep's queries outside k's subsample weigh nothing. ECE and ECE.all have fixed bins and
    per-query weights, so half the queries' rows give the probe's value on only those queries."""
    result = calibration.probe(wikiqa, seed=1)
    assert set(result.parts) == set(result.metrics) - {"ECE.adaptive"}
    qids = scored_lists(wikiqa).qids
    for name, part in result.parts.items():
        assert part.value() == pytest.approx(result.metrics[name], rel=1e-12), name
        if name in ("Brier", "NLL"):  # [Σ loss, #candidates] (test_brier_and_nll_…)
            continue
        assert part.statistic == "calibration_error" and part.rows.shape == (qids.size, 11)
        np.testing.assert_array_equal(part.qids, qids)
    queries = result.curves["ECE.nonrel"]["queries"]
    for k, n in zip((1, 2, 5, 9), queries, strict=True):
        mass = result.parts[f"ECE.nonrel_{k}"].rows[:, -1]
        assert mass.sum() == n * (k + 1) and np.count_nonzero(mass) == n
    half = qids[::2]
    alone = calibration.probe(wikiqa.filter(pc.is_in(wikiqa["qid"], value_set=pa.array(half))), seed=1)
    for name in ("ECE", "ECE.all"):
        part = result.parts[name]
        kept = QueryParts(half, part.rows[::2], part.statistic)
        assert kept.value() == pytest.approx(alone.metrics[name], rel=1e-12), name


def test_raw_scores_get_erce_only_and_no_diagram(scores_table) -> None:
    result = calibration.probe(scores_table([[1, 0], [0, 1]], [[3.0, 1.0], [2.0, 5.0]], probabilistic=False))
    assert set(result.metrics) == {"ERCE"} and set(result.parts) == {"ERCE"} and result.plots == {}
    assert result.parts["ERCE"].value() == pytest.approx(result.metrics["ERCE"], rel=1e-12)
    assert "scores are not probabilities" in result.notes[0]


def test_flagged_probabilities_outside_the_unit_interval_are_an_error(scores_table) -> None:
    with pytest.raises(RankuqError, match=r"score 1.5 is outside \[0, 1\]"):
        calibration.probe(scores_table([[1, 0]], [[1.5, 0.2]], probabilistic=True))


def test_brier_and_nll_by_hand_and_as_scikit_learn_on_real_wikiqa(scores_table, wikiqa) -> None:
    """q0 scores its relevant candidate 0.75 and its non-relevant one 0.5; q1 0.625 and 1.0 (NLL clips
    it to 1 − ε); float32 holds each exactly. Brier = (1/16 + 1/4 + 9/64 + 1) / 4; NLL = (−log 0.75 −
    log 0.5 − log 0.625 − log ε) / 4. The parts are a query's [Σ loss, #candidates]. On WikiQA's
    answerable queries: scikit-learn's values."""
    from sklearn.metrics import brier_score_loss, log_loss

    result = calibration.probe(scores_table([[1, 0], [1, 0]], [[0.75, 0.5], [0.625, 1.0]]))
    eps = np.finfo(np.float64).eps
    brier = [1 / 16 + 1 / 4, 9 / 64 + 1.0]
    nll = [-np.log(0.75) - np.log(0.5), -np.log(0.625) - np.log(eps)]
    assert result.metrics["Brier"] == pytest.approx(sum(brier) / 4, rel=1e-12)
    assert result.metrics["NLL"] == pytest.approx(sum(nll) / 4, rel=1e-12)
    np.testing.assert_allclose(result.parts["Brier"].rows, [[brier[0], 2], [brier[1], 2]], rtol=1e-12)
    np.testing.assert_allclose(result.parts["NLL"].rows, [[nll[0], 2], [nll[1], 2]], rtol=1e-12)
    assert result.parts["NLL"].statistic == "ratio_of_means"
    lists = scored_lists(wikiqa).with_relevant()
    on_wikiqa = calibration.probe(lists)
    p, y = lists.ranked.scores, lists.ranked.row_labels > 0
    assert on_wikiqa.metrics["Brier"] == pytest.approx(brier_score_loss(y, p), rel=1e-12)
    assert on_wikiqa.metrics["NLL"] == pytest.approx(log_loss(y, p), rel=1e-12)
