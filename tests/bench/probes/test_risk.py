"""Risk-aware ranking: the RA greedy by hand, b = 0 is the mean ranking, b chosen on dev in [0, 1]
and apart among b < 0 (RA.neg), CVaR±."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankuq.bench import metrics
from rankuq.bench.probes import risk, scored_lists
from rankuq.bench.probes.risk import RISK_METRICS, Covariance, cvar, order_by, risk_aware_orders
from rankuq.bench.statistics.parts import QueryParts
from rankuq.errors import RankuqError

# A: mean 0.7, var 0.04; B: mean 0.6, var 0.04, cov(A, B) = 0.04; C: mean 0.55, var 0.0225,
# cov(A, C) = −0.03. With b = 1: rank 1 is A (0.66 against 0.56 and 0.5275); rank 2 scores
# B 0.6 − 0.04 − 2·0.04 = 0.48 and C 0.55 − 0.0225 + 2·0.03 = 0.5875, so C, then B.
PORTFOLIO = [[[0.9, 0.5], [0.8, 0.4], [0.4, 0.7]]]


def test_the_greedy_follows_the_covariance_with_the_candidates_above(lists_table) -> None:
    lists = scored_lists(lists_table([[0, 0, 1]], PORTFOLIO))
    orders = risk_aware_orders(lists, [0.0, 1.0], covariance="above")
    assert orders[0.0].tolist() == [[0, 1, 2]]  # the mean ranking: A, B, C
    assert orders[1.0].tolist() == [[0, 2, 1]]  # A, C, B
    assert lists.per_query(["AP"], orders[1.0])["AP"].tolist() == [0.5]  # C, relevant, moves up


def test_the_authors_covariance_over_all_others_can_change_the_first_pick(lists_table) -> None:
    """The authors' code: every candidate scores mean − b·var − 2b·Σ_{others} cov, then sorted.
    Σ cov: A 0.04 − 0.03, B 0.04 − 0.03 (cov(B, C) = −0.03), C −0.03 − 0.03. Scores: A 0.7 −
    0.06·b, B 0.6 − 0.06·b, C 0.55 + 0.0975·b; C overtakes A from b > 0.15/0.1575 ≈ 0.952, so at
    b = 1 the relevant C is ranked first (C 0.6475, A 0.64, B 0.54), which the greedy never does."""
    lists = scored_lists(lists_table([[0, 0, 1]], PORTFOLIO))
    orders = risk_aware_orders(lists, [0.0, 0.9, 1.0, -1.0], covariance="all")
    assert orders[0.0].tolist() == [[0, 1, 2]]
    assert orders[0.9].tolist() == [[0, 2, 1]]  # C above B from b > 0.05/0.1575 ≈ 0.317
    assert orders[1.0].tolist() == [[2, 0, 1]]
    assert orders[-1.0].tolist() == [[0, 1, 2]]  # risk-seeking: A 0.76, B 0.66, C 0.4525
    assert risk.risk_aware_mean(lists, 1.0, "R@1") == 1.0
    assert risk.risk_aware_mean(lists, 1.0, "R@1", covariance="above") == 0.0
    with pytest.raises(RankuqError, match=r"risk\.covariance must be one of all, above, got 'none'"):
        risk_aware_orders(lists, [1.0], covariance="none")  # type: ignore[arg-type]  # the bad value under test


# the grid before issue 29: risk-seeking and large b beside [0, 1]
OLD_B_GRID = (-1.0, -0.5, -0.25, -0.1, 0.0, 0.05, 0.25, *(i / 10 for i in range(1, 11)), 2.0, 5.0, 10.0)


def test_the_default_grid_is_the_papers_0_to_1_and_risk_seeking_b_is_apart() -> None:
    assert {round(0.1 * i, 1) for i in range(11)} <= set(risk.B_GRID)
    assert min(risk.B_GRID) == 0.0 and max(risk.B_GRID) == 1.0
    assert risk.NEGATIVE_B_GRID and all(b < 0 for b in risk.NEGATIVE_B_GRID)


def test_risk_seeking_b_no_longer_wins_the_default_choice(lists_table) -> None:
    """A relevant B behind a certain A (mean 0.7, no variance) with a wide spread (mean 0.6, var
    0.1225): B scores 0.6 − 0.1225·b and is first only for b < −0.816, so on dev only b = −1 lifts
    R@1 from 1/2 to 1 (a second, certain list keeps its relevant first). The old grid chose it; the
    default grid's curve is flat (the tie rule: b = 0), and RA.neg chooses it among b < 0."""
    table = lists_table([[0, 1], [1, 0]], [[[0.7, 0.7], [0.95, 0.25]], [[0.9, 0.9], [0.1, 0.1]]])
    assert risk.probe(table, dev=table, b_grid=OLD_B_GRID, negative_b_grid=()).metrics["RA.b"] == -1.0
    result = risk.probe(table, dev=table)
    assert result.metrics["RA.b"] == 0.0 and result.metrics["RA.R@1"] == 0.5
    assert result.metrics["RA.neg.b"] == -1.0 and result.metrics["RA.neg.R@1"] == 1.0
    assert result.parts["RA.neg.R@1"].value() == 1.0
    with pytest.raises(RankuqError, match=r"negative_b_grid must hold b < 0 only"):
        risk.probe(table, dev=table, negative_b_grid=(-1.0, 0.0))


def test_ties_go_to_the_b_nearest_0_then_the_smaller() -> None:
    assert risk.choose_b({-0.5: 0.3, 0.5: 0.3, 1.0: 0.3}) == -0.5
    assert risk.choose_b({0.0: 0.3, 0.1: 0.3, -0.1: 0.3}) == 0.0
    assert risk.choose_b({-1.0: 0.3, -0.1: 0.3, -0.05: 0.2}) == -0.1
    assert risk.choose_b({0.0: 0.2, 0.25: 0.3, 1.0: 0.3}) == 0.25


@pytest.mark.parametrize("covariance", ["all", "above"])
def test_b_zero_is_the_mean_ranking_exactly(wikiqa, covariance: Covariance) -> None:
    lists = scored_lists(wikiqa).with_relevant()
    order = risk_aware_orders(lists, [0.0], covariance)[0.0]
    np.testing.assert_array_equal(order, np.broadcast_to(np.arange(order.shape[1]), order.shape))
    names = ["R@1", "AP", "nDCG@10"]
    expected = metrics.per_query(wikiqa, names, drop_queries_without_relevant=True)[1]
    got = lists.per_query(names, order)
    assert all(np.array_equal(got[n], expected[n]) for n in names)


def test_b_is_chosen_on_dev_and_reported_on_test(lists_table) -> None:
    """On dev, a large enough b lifts the relevant C to rank 2 (AP 1/3 → 1/2); every b < 0 keeps the
    mean ranking, so RA.neg takes the one nearest 0; without dev only the curve is reported."""
    table = lists_table([[0, 0, 1], [1, 0, 0]], [*PORTFOLIO, [[0.9, 0.9], [0.2, 0.3], [0.1, 0.1]]])
    result = risk.probe(table, dev=table, b_grid=(0.0, 0.25, 1.0), select_by="AP", covariance="above")
    # rank 2 scores B 0.6 − 0.12·b and C 0.55 + 0.0375·b: C overtakes B from b > 0.3175
    assert result.metrics["RA.b"] == 1.0
    assert result.metrics["RA.AP"] == pytest.approx((0.5 + 1.0) / 2)
    # the curve runs over the default b < 0 too: risk-seeking keeps B above C (0.6 + 0.12·|b|)
    negative = len(risk.NEGATIVE_B_GRID)
    assert result.curves["RA"]["AP"].tolist() == pytest.approx([(1 / 3 + 1) / 2] * (negative + 2) + [0.75])
    assert result.metrics["RA.neg.b"] == max(risk.NEGATIVE_B_GRID)
    assert result.metrics["RA.neg.AP"] == pytest.approx((1 / 3 + 1) / 2)
    without = risk.probe(table, b_grid=(0.0, 1.0))
    assert not any(k.startswith("RA.") for k in without.metrics) and "no dev table" in without.notes[0]
    assert without.curves["RA"]["b"].tolist() == [*risk.NEGATIVE_B_GRID, 0.0, 1.0]
    # parts: CVaR's and the mean ranking's, no RA ranking without a b
    assert {k for k in without.parts if k.startswith("RA.")} == {f"RA.mean.{m}" for m in RISK_METRICS}


def test_a_given_b_is_reported_instead_of_the_dev_choice(lists_table) -> None:
    """b = 0.25 keeps B above C (AP 1/3 on the first list) although dev would choose 1.0; it joins
    the curve, and needs no dev table (RA.neg does)."""
    table = lists_table([[0, 0, 1], [1, 0, 0]], [*PORTFOLIO, [[0.9, 0.9], [0.2, 0.3], [0.1, 0.1]]])
    for dev in (table, None):
        result = risk.probe(table, dev=dev, b_grid=(0.0, 1.0), select_by="AP", b=0.25, covariance="above")
        assert result.metrics["RA.b"] == 0.25
        assert result.metrics["RA.AP"] == pytest.approx((1 / 3 + 1.0) / 2)
        assert result.curves["RA"]["b"].tolist() == [*risk.NEGATIVE_B_GRID, 0.0, 0.25, 1.0]
        assert ("RA.neg.b" in result.metrics) == (dev is not None)
    lists = scored_lists(table).with_relevant()
    assert risk.risk_aware_mean(lists, 1.0, "AP", covariance="above") == pytest.approx(0.75)


def test_a_deterministic_ranker_keeps_its_mean_ranking(wikiqa_deterministic) -> None:
    result = risk.probe(wikiqa_deterministic, dev=wikiqa_deterministic)
    plain = metrics.compute(wikiqa_deterministic, ["R@1", "AP"], drop_queries_without_relevant=True)
    assert result.metrics["RA.b"] == 0.0  # every b ties on dev: the one nearest 0
    assert result.metrics["RA.neg.b"] == max(risk.NEGATIVE_B_GRID)  # and the mean ranking too
    assert result.metrics["RA.neg.AP"] == plain["AP"] and result.metrics["RA.neg.AP.p_value"] == 1.0
    assert result.metrics["RA.R@1"] == plain["R@1"] and result.metrics["CVaR.pessimistic.AP"] == plain["AP"]
    assert result.metrics["RA.R@1.p_value"] == 1.0
    assert result.plots == {}  # its RA curve is flat: every b gives the mean ranking


def test_cvar_takes_the_upper_or_lower_tail_of_the_draws(lists_table) -> None:
    lists = scored_lists(lists_table([[1, 0]], [[[0.5, 0.5, 0.5, 0.5], [0.0, 0.0, 0.9, 1.0]]]))
    np.testing.assert_allclose(cvar(lists, 0.5, optimistic=True), [[0.5, 0.95]])
    np.testing.assert_allclose(cvar(lists, 0.5, optimistic=False), [[0.5, 0.0]])
    np.testing.assert_allclose(cvar(lists, 0.0), lists.scores, atol=1e-7)  # α = 0: the mean
    assert order_by(lists, cvar(lists, 0.5, optimistic=True)).tolist() == [[1, 0]]
    ten = scored_lists(lists_table([[1]], [[list(np.arange(10) / 10)]]))
    assert cvar(ten, 0.7)[0, 0] == pytest.approx(0.8)  # the 3 highest, although 0.7·10 > 7 in floats
    with pytest.raises(RankuqError, match=r"alpha must be in \[0, 1\)"):
        cvar(ten, 1.0)


def test_the_probe_on_real_wikiqa(wikiqa) -> None:
    result = risk.probe(wikiqa, dev=wikiqa, b_grid=(0.0, 1.0, 10.0))
    curve = result.curves["RA"]
    plain = metrics.compute(wikiqa, ["R@1"], drop_queries_without_relevant=True)["R@1"]
    assert curve["R_at_1"][curve["b"] == 0.0] == plain
    assert np.array_equal(curve["R_at_1"], curve["dev_R_at_1"])  # dev is the test table here
    assert result.metrics["RA.R@1"] == curve["R_at_1"][curve["b"] >= 0].max()
    assert result.metrics["RA.neg.R@1"] == curve["R_at_1"][curve["b"] < 0].max()
    assert result.metrics["RA.neg.b"] < 0
    default = risk.probe(wikiqa, dev=wikiqa)
    assert 0.0 <= default.metrics["RA.b"] <= 1.0 and default.metrics["RA.neg.b"] in risk.NEGATIVE_B_GRID
    assert {
        "CVaR.optimistic.nDCG@10",
        "CVaR.pessimistic.nDCG@10.p_value",
        "RA.b",
        "RA.AP",
        "RA.nDCG@10",
        "RA.neg.b",
        "RA.neg.AP",
        "RA.neg.AP.p_value",
    } <= set(result.metrics)
    assert set(result.plots) == {"risk_aversion"}  # S draws: a curve over b worth drawing


def test_the_parts_give_the_metrics_and_the_mean_ranking_on_the_same_queries(wikiqa) -> None:
    """RA.<m>, RA.neg.<m> and CVaR.<view>.<m> split by query (statistic mean) over the queries with a
    relevant candidate; RA.mean.<m>, parts only, is the mean ranking on those queries (the
    leaderboard's <m>). Each query's RA and CVaR rankings use its own draws only, so half the
    queries' rows give the probe run on only those queries (RA.neg: RA at its b)."""
    result = risk.probe(wikiqa, dev=wikiqa, b_grid=(0.0, 0.5, 5.0))
    qids = scored_lists(wikiqa).with_relevant().qids
    mean_ranking = {f"RA.mean.{m}" for m in RISK_METRICS}
    assert set(result.parts) - set(result.metrics) == mean_ranking
    assert set(result.parts) - mean_ranking == {
        f"{prefix}.{m}"
        for prefix in ("RA", "RA.neg", "CVaR.optimistic", "CVaR.pessimistic")
        for m in RISK_METRICS
    }
    plain = metrics.compute(wikiqa, list(RISK_METRICS), drop_queries_without_relevant=True)
    for name, part in result.parts.items():
        expected = plain[name.removeprefix("RA.mean.")] if name in mean_ranking else result.metrics[name]
        assert part.value() == pytest.approx(expected, rel=1e-12), name
        assert part.statistic == "mean" and part.rows.shape == (qids.size, 1)
        np.testing.assert_array_equal(part.qids, qids)
    half, b, negative = qids[::2], result.metrics["RA.b"], result.metrics["RA.neg.b"]
    assert b == 0.5 and negative < 0  # RA differs from the mean ranking
    halved = wikiqa.filter(pc.is_in(wikiqa["qid"], value_set=pa.array(half)))
    alone = risk.probe(halved, b=b, b_grid=(b,))
    alone_negative = risk.probe(halved, b=negative, b_grid=(negative,)).metrics
    for name, part in result.parts.items():
        kept = QueryParts(half, part.rows[::2], part.statistic).value()
        if name in mean_ranking:
            expected = alone.parts[name].value()
        elif name.startswith("RA.neg."):
            expected = alone_negative[name.replace("RA.neg.", "RA.", 1)]
        else:
            expected = alone.metrics[name]
        assert kept == pytest.approx(expected, rel=1e-12), name
