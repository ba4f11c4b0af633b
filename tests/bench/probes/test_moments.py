"""The moments probe (Cohen et al., 2021, Figure 2): its rank correlation against scipy's, its moments
against scipy's, and the direction it reads on constructed draws."""

import numpy as np
import pytest
from scipy import stats

from rankuq.bench.probes import PROBES, scored_lists
from rankuq.bench.probes.moments import log_moments, probe, spearman_by_row


def test_the_rank_correlation_is_scipys_per_row_over_each_rows_candidates():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (40, 9)).astype(float)  # ties, as the draws' moments have
    b = a + rng.normal(0, 2, a.shape)
    length = rng.integers(1, 10, 40)
    mask = np.arange(9) < length[:, None]
    rho = spearman_by_row(a, b, mask)
    for row in range(40):
        n = length[row]
        x, y = a[row, :n], b[row, :n]
        if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            assert np.isnan(rho[row])
        else:
            assert rho[row] == pytest.approx(stats.spearmanr(x, y).statistic)


def test_the_moments_are_those_of_the_log_draws(lists_table):
    rng = np.random.default_rng(1)
    draws = rng.uniform(0.05, 0.95, (3, 4, 20))
    lists = scored_lists(lists_table([[1, 0, 0, 0]] * 3, draws.tolist()))
    mean, variance, skew = log_moments(lists)
    logs = np.log(lists.samples.astype(np.float64))
    np.testing.assert_allclose(mean, logs.mean(axis=2))
    np.testing.assert_allclose(variance, logs.var(axis=2))
    np.testing.assert_allclose(skew, stats.skew(logs, axis=2))


def test_variance_falling_and_skew_turning_negative_with_the_score_read_minus_one(lists_table):
    # Each candidate's 20 log-draws: a high value h and a fraction p of them g lower. Variance
    # g²·p(1 − p) and skew −(1 − 2p)/√(p(1 − p)): the higher the candidate, the smaller g and p, so the
    # lower its variance and the more negative its skew (a left tail, as the paper's top documents).
    def draws(high: float, gap: float, low_share: float) -> list[float]:
        low = round(20 * low_share)
        return np.exp([high - gap] * low + [high] * (20 - low)).tolist()

    candidates = [
        draws(-0.05, 0.1, 0.05),
        draws(-0.3, 0.3, 0.1),
        draws(-0.8, 0.6, 0.2),
        draws(-1.5, 1.0, 0.4),
    ]
    table = lists_table([[1, 0, 0, 0], [0, 1, 0, 0]], [candidates] * 2)
    result = PROBES.get("moments")(table)
    assert result.metrics["moments.rho.variance"] == pytest.approx(-1.0)
    assert result.metrics["moments.rho.skew"] == pytest.approx(-1.0)
    assert set(result.parts) == {"moments.rho.variance", "moments.rho.skew"}
    assert result.parts["moments.rho.variance"].value() == pytest.approx(-1.0)


def test_a_deterministic_ranker_has_no_moments(scores_table):
    result = probe(scores_table([[1, 0, 0]], [[0.9, 0.5, 0.1]]))
    assert result.metrics == {} and "S = 1" in result.notes[0]


def test_real_draws_give_a_correlation_per_query_with_three_candidates(wikiqa):
    lists = scored_lists(wikiqa)
    result = probe(lists)
    eligible = int((lists.length >= 3).sum())
    for key in ("moments.rho.variance", "moments.rho.skew"):
        assert -1.0 <= result.metrics[key] <= 1.0
        parts = result.parts[key]
        assert 0 < len(parts.qids) <= eligible
        assert parts.value() == pytest.approx(result.metrics[key])
