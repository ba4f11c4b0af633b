"""Cutoff prediction: F1 at each cutoff and the draw features by hand, the learned/oracle ratio."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankuq.bench.probes import ProbeResult, cutoff, scored_lists
from rankuq.bench.probes.cutoff import draw_features, f1_at_cutoffs
from rankuq.bench.statistics.parts import QueryParts
from rankuq.errors import RankuqError


def test_f1_at_each_cutoff_by_hand(scores_table) -> None:
    """Ranked labels 1, 0, 1, 0 with 2 relevant: F1(c) = 2·rel@c / (c + 2); cuts past the end
    keep the list."""
    lists = scored_lists(scores_table([[1, 0, 1, 0], [0, 1]], [[0.9, 0.8, 0.7, 0.6], [0.9, 0.1]]))
    np.testing.assert_allclose(f1_at_cutoffs(lists, 6)[0], [2 / 3, 2 / 4, 4 / 5, 4 / 6, 4 / 6, 4 / 6])
    np.testing.assert_allclose(f1_at_cutoffs(lists, 3)[1], [0, 2 / 3, 2 / 3])


def test_draw_features_by_hand(lists_table) -> None:
    """Draws 0, 0, 0, 1: mean ¼, std √(3/16), skew m3/m2^1.5 with m3 = 3/32, entropy of ¾ and ¼
    in the lowest and highest of 10 bins; equal draws (ranked first, mean ½) have none of them."""
    lists = scored_lists(lists_table([[1, 0]], [[[0.0, 0.0, 0.0, 1.0], [0.5, 0.5, 0.5, 0.5]]]))
    features = draw_features(lists)
    m2 = 3 / 16
    np.testing.assert_allclose(features[0, 0], [0.5, 0, 0, 0])
    np.testing.assert_allclose(
        features[0, 1], [0.25, np.sqrt(m2), (3 / 32) / m2**1.5, -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))]
    )


def test_learned_cutoffs_never_beat_the_oracle(wikiqa, wikiqa_deterministic) -> None:
    """On the first 150 WikiQA questions (time): the learner only sees the features."""
    questions = pc.unique(wikiqa["qid"])[:150]
    wikiqa, wikiqa_deterministic = (
        t.filter(pc.is_in(t["qid"], value_set=questions)) for t in (wikiqa, wikiqa_deterministic)
    )
    result = cutoff.probe(wikiqa, seed=1)
    assert (
        0 < result.metrics["cutoff.F1_ratio.scores"] <= 1
        and 0 < result.metrics["cutoff.F1_ratio.uncertainty"] <= 1
    )
    lists = scored_lists(wikiqa).with_relevant()
    assert result.metrics["cutoff.F1.oracle"] == pytest.approx(f1_at_cutoffs(lists).max(axis=1).mean())
    deterministic = cutoff.probe(wikiqa_deterministic, seed=1)
    assert set(deterministic.metrics) == {"cutoff.F1_ratio.scores", "cutoff.F1.oracle"}
    assert deterministic.metrics["cutoff.F1_ratio.scores"] == result.metrics["cutoff.F1_ratio.scores"]
    check_parts(result, lists.qids)
    check_parts(deterministic, lists.qids)


def test_fewer_queries_than_folds_are_left_out_one_by_one(wikiqa) -> None:
    """Three questions with a correct sentence (a small BEIR folder has as few): three folds; one
    question leaves nothing to cross-validate on, which is said in one line."""
    lists = scored_lists(wikiqa).with_relevant()
    questions = pa.array(lists.qids[:3])
    result = cutoff.probe(wikiqa.filter(pc.is_in(wikiqa["qid"], value_set=questions)), seed=0)
    assert 0 < result.metrics["cutoff.F1_ratio.scores"] <= 1
    check_parts(result, lists.qids[:3])
    one = wikiqa.filter(pc.is_in(wikiqa["qid"], value_set=questions[:1]))
    with pytest.raises(RankuqError, match=r"needs 2 or more \(the table has 1\); judge more queries"):
        cutoff.probe(one)


def check_parts(result: ProbeResult, qids: np.ndarray) -> None:
    """Each F1 ratio as rows [learned F1, oracle F1] per query (ratio_of_means), the oracle's F1 as
    its mean; the metrics on every query."""
    ratios = {k for k in result.metrics if k.startswith("cutoff.F1_ratio.")}
    assert set(result.parts) == ratios | {"cutoff.F1.oracle"}
    for name, part in result.parts.items():
        assert part.value() == pytest.approx(result.metrics[name], rel=1e-12), name
        assert part.statistic == ("mean" if name == "cutoff.F1.oracle" else "ratio_of_means")
        np.testing.assert_array_equal(part.qids, qids)
    oracle = result.parts["cutoff.F1.oracle"].rows[:, 0]
    for name in ratios:
        np.testing.assert_array_equal(result.parts[name].rows[:, 1], oracle)


def test_the_oracle_parts_of_half_the_queries_give_the_probe_on_them(wikiqa_deterministic) -> None:
    """Each query's oracle F1 is its own: on half of 60 questions the rows give the probe's
    cutoff.F1.oracle run on only them (the learned cutoffs refit on other folds, so their ratio is
    checked on all the queries only)."""
    table = wikiqa_deterministic
    table = table.filter(pc.is_in(table["qid"], value_set=pc.unique(table["qid"])[:60]))
    oracle = cutoff.probe(table, seed=1).parts["cutoff.F1.oracle"]
    half = oracle.qids[::2]
    alone = cutoff.probe(table.filter(pc.is_in(table["qid"], value_set=pa.array(half))), seed=1)
    np.testing.assert_array_equal(oracle.rows[::2], alone.parts["cutoff.F1.oracle"].rows)
    kept = QueryParts(half, oracle.rows[::2], oracle.statistic).value()
    assert kept == pytest.approx(alone.metrics["cutoff.F1.oracle"], rel=1e-12)
