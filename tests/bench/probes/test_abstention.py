"""The abstention probe (rankuq.bench.probes.abstention): reference sets, default confidences, the
per-query parts and the skips (the protocol by hand: test_abstention_protocol.py; threshold
calibration and the reference-set size: test_abstention_studies.py; the confidence functions
themselves: test_confidence.py)."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from sklearn.linear_model import Ridge

from rankuq.bench.probes import abstention, scored_lists
from rankuq.bench.probes.abstention_protocol import normalised_auc
from rankuq.bench.probes.confidence import sorted_scores
from rankuq.bench.statistics.parts import STATISTICS
from rankuq.errors import RankuqError


def test_a_perfect_ranker_has_auc_terms_and_no_nauc(wikiqa) -> None:
    perfect = wikiqa.set_column(
        wikiqa.schema.get_field_index("prob_mean"), "prob_mean", wikiqa["label"].cast("double")
    )
    result = abstention.probe(perfect, confidences=["u_max", "u_std"])
    assert not any(k.startswith("nAUC") for k in result.metrics)
    assert result.metrics["AUC.AP.oracle"] == result.metrics["AUC.AP.random"] == pytest.approx(0.8)
    assert result.metrics["AUC.AP.u_max"] == pytest.approx(0.8)
    assert any("nAUC for AP is undefined: the oracle equals random" in note for note in result.notes)


def test_queries_the_protocol_cannot_score_are_noted(scores_table) -> None:
    table = scores_table(
        [[1, 0], [0, 1, 0], [1], [0, 0], [0, 1]], [[0.9, 0.1], [0.5, 0.4, 0.3], [0.7], [0.2, 0.1], [0.6, 0.3]]
    )
    result = abstention.probe(table, confidences=["u_1-2"], names=["RR"])
    assert result.notes[:2] == (
        "abstention: 1 queries without a relevant candidate left out",
        "abstention: 1 one-candidate queries left out",
    )
    # kept: q0 (RR 1, u 0.8), q1 (RR ½, u 0.1), q4 (RR ½, u 0.3): the confidence ranks as the oracle
    assert result.metrics["nAUC.RR.u_1-2"] == pytest.approx(1.0)
    with pytest.raises(RankuqError, match="abstention needs 2 or more queries"):
        abstention.probe(scores_table([[1, 0]], [[0.9, 0.1]]))
    with pytest.raises(RankuqError, match=r"splits need 10 or more usable queries \(the table has 3\)"):
        abstention.probe(table, confidences=["u_lin"])


def test_u_lin_is_ridge_on_the_sorted_scores_of_the_reference_set(wikiqa, wikiqa_deterministic) -> None:
    """dev = the stochastic table, test = the deterministic one: a domain-transfer pair."""
    test, dev = scored_lists(wikiqa_deterministic), scored_lists(wikiqa)
    result = abstention.probe(test, dev=dev, confidences=["u_lin", "u_std"], names=["AP"])
    kept_test, kept_dev = (
        lists.select((lists.ranked.n_relevant > 0) & (lists.length >= 2)) for lists in (test, dev)
    )
    ridge = Ridge(alpha=0.1).fit(sorted_scores(kept_dev), kept_dev.per_query(["AP"])["AP"])
    expected = normalised_auc(kept_test.per_query(["AP"])["AP"], ridge.predict(sorted_scores(kept_test)))
    assert result.metrics["nAUC.AP.u_lin"] == pytest.approx(expected.value, abs=1e-12)
    assert result.metrics["nAUC.AP.u_lin"] > result.metrics["nAUC.AP.u_std"] > 0
    assert "break_even.AP" in result.metrics
    assert result.curves["reference_size"]["size"][-1] == kept_dev.length.size


def test_splits_average_every_confidence_on_the_same_test_parts(wikiqa) -> None:
    result = abstention.probe(wikiqa, confidences=["u_std", "u_lin", "u_log"], names=["AP", "RR"], splits=2)
    assert {"nAUC.AP.u_std", "nAUC.AP.u_lin", "nAUC.AP.u_log", "threshold.rate_MAE.90.u_lin"} <= set(
        result.metrics
    )
    again = abstention.probe(wikiqa, confidences=["u_std", "u_lin"], names=["AP"], splits=2)
    assert again.metrics["nAUC.AP.u_lin"] == result.metrics["nAUC.AP.u_lin"]  # seeded


def test_default_confidences_of_a_stochastic_ranker(wikiqa) -> None:
    result = abstention.probe(wikiqa, names=["AP"], splits=1)
    assert {
        f"nAUC.AP.{u}"
        for u in (
            "u_max",
            "u_std",
            "u_1-2",
            "u_lin",
            "u_log",
            "u_mah",
            "u_rf",
            "u_mlp",
            "u_mean_var",
            "u_top_var",
        )
    } <= set(result.metrics)


def test_a_learner_the_reference_set_cannot_define_is_noted(scores_table) -> None:
    """27 of 30 queries have RR 1: RR's quartiles tie, so u_log has no good and bad classes."""
    labels = [[1, 0, 0]] * 27 + [[0, 1, 0]] * 3
    scores = [[0.9 - q / 100, 0.5, 0.1 + q / 100] for q in range(30)]
    result = abstention.probe(
        scores_table(labels, scores), confidences=["u_max", "u_log"], names=["RR"], splits=2
    )
    assert "nAUC.RR.u_max" in result.metrics and "AUC.RR.u_log" not in result.metrics
    assert result.notes == (
        "abstention: u_log for RR left out: the reference metric values have no spread between "
        "their quartiles (1.0 and 1.0), so good and bad instances are undefined",
    )


NAMES = ["AP", "RR"]  # the metrics of the fixture transfer (conftest.py)


def test_with_a_reference_set_every_claimed_metric_has_parts_that_recompute_it(transfer) -> None:
    result, qids = transfer
    expected = {f"nAUC.{m}.{u}" for m in NAMES for u in ("u_max", "u_std", "u_lin")} | {
        f"threshold.{what}.{rate}.{u}"
        for what in ("AP_MAE", "rate_MAE")
        for rate in (10, 50, 90)
        for u in ("u_max", "u_std", "u_lin")
    }
    assert set(result.parts) == expected | {"nAUC.AP.u_lin@100"}  # 240 usable dev queries: not @500
    for name, parts in result.parts.items():
        assert parts.value() == pytest.approx(result.metrics[name], rel=1e-12), name
        np.testing.assert_array_equal(parts.qids, qids)
    assert {parts.statistic for parts in result.parts.values()} == {
        "normalised_auc",
        "threshold_error",
        "abstention_rate_error",
    }


def test_the_statistics_on_a_subset_are_the_probe_on_those_queries(
    transfer, wikiqa, wikiqa_deterministic
) -> None:
    """A reference-free confidence and a threshold set on dev do not depend on the other test queries."""
    result, qids = transfer
    subset = np.isin(qids, qids[::3])
    table = wikiqa_deterministic.filter(pc.is_in(wikiqa_deterministic["qid"], pa.array(qids[subset])))
    alone = abstention.probe(table, dev=wikiqa, confidences=["u_max"], names=["AP"])
    for name in ("nAUC.AP.u_max", "threshold.AP_MAE.50.u_max", "threshold.rate_MAE.90.u_max"):
        parts = result.parts[name]
        assert STATISTICS[parts.statistic](parts.rows[subset]) == pytest.approx(
            alone.metrics[name], rel=1e-12
        )


def test_splits_emit_no_parts_and_the_whole_table_does(wikiqa) -> None:
    splits = abstention.probe(wikiqa, confidences=["u_std", "u_lin"], names=["AP"], splits=1)
    assert not splits.parts and "nAUC.AP.u_lin@100" in splits.metrics
    whole = abstention.probe(wikiqa, confidences=["u_max", "u_1-2"], names=["AP"])
    assert set(whole.parts) == {"nAUC.AP.u_max", "nAUC.AP.u_1-2"}
    assert all(whole.parts[k].value() == pytest.approx(whole.metrics[k], rel=1e-12) for k in whole.parts)
