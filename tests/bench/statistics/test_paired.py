"""Paired t-tests per query and mean ± std over seeds."""

import numpy as np
import pytest
from scipy import stats

from rankuq.bench.statistics.paired import mean_std, paired_t, paired_ttest
from rankuq.errors import RankuqError


def test_paired_t_is_scipys_and_defines_the_degenerate_cases() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30)
    expected = stats.ttest_rel(a, b)
    assert (paired_t(a, b).t, paired_t(a, b).p) == pytest.approx((expected.statistic, expected.pvalue))
    assert (paired_t(a, a).t, paired_t(a, a).p) == (0.0, 1.0)  # no difference at all
    assert (paired_t(a + 0.5, a).t, paired_t(a + 0.5, a).p) == (np.inf, 0.0)  # a constant shift
    assert paired_t(a - 0.5, a).t == -np.inf
    with pytest.raises(RankuqError, match="2 or more"):
        paired_t(a[:1], b[:1])


def test_per_query_test_between_two_tables(scores_table) -> None:
    labels = [[1, 0], [1, 0], [0, 1], [1, 0]]
    method = scores_table(labels, [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    baseline = scores_table(labels, [[0.1, 0.9], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]])
    result = paired_ttest(method, baseline, "RR")
    assert result.n == 4 and result.mean_difference == pytest.approx(0.25)  # RR 1 vs ½ twice
    assert result.p == pytest.approx(stats.ttest_rel([1, 1, 1, 1], [0.5, 1, 0.5, 1]).pvalue)
    other = scores_table([[1, 0]] * 3, [[0.9, 0.1]] * 3)
    with pytest.raises(RankuqError, match=r"rank different queries \(1 in one only, e.g. qid q3\)"):
        paired_ttest(method, other)


def test_mean_and_std_over_seeds() -> None:
    assert mean_std([1.0, 2.0, 3.0]) == (2.0, 1.0)
    assert mean_std([0.5]) == (0.5, 0.0)
