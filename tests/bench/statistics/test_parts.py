"""Per-query parts (bench.statistics.parts): each registered statistic against its definition worked out
by hand, the parts table round trip, and the errors of malformed parts."""

import numpy as np
import pyarrow as pa
import pytest

from rankuq.bench import probes  # noqa: F401  (the probes register their own statistics)
from rankuq.bench.statistics.parts import STATISTICS, QueryParts, parts_table, per_query, read_parts

QIDS = np.array(["q1", "q2", "q3"])


def test_the_mean_of_a_per_query_value():
    assert per_query(QIDS, np.array([1.0, 0.0, 0.5])).value() == pytest.approx(0.5)


def test_the_calibration_error_sums_the_queries_gaps_per_bin_before_the_absolute_value():
    # Two bins: gaps (q1: +0.2, −0.1), (q2: −0.3, 0.0), (q3: +0.1, +0.4); masses 2, 1, 1.
    rows = np.array([[0.2, -0.1, 2.0], [-0.3, 0.0, 1.0], [0.1, 0.4, 1.0]])
    # |0.2 − 0.3 + 0.1| + |−0.1 + 0.4| = 0 + 0.3, over a mass of 4.
    assert QueryParts(QIDS, rows, "calibration_error").value() == pytest.approx(0.3 / 4)


def test_a_ratio_of_means_is_the_ratio_of_the_sums():
    rows = np.array([[0.5, 1.0], [0.2, 0.4], [0.0, 0.6]])
    assert QueryParts(QIDS, rows, "ratio_of_means").value() == pytest.approx(0.7 / 2.0)


def test_the_probes_register_their_own_statistics():
    assert {"normalised_auc", "threshold_error", "abstention_rate_error", "fold_f1_macro"} <= set(STATISTICS)
    # NOTA's 5-fold F1-macro: per fold, F1 of each class averaged; then the folds' mean.
    rows = np.array([[0, 1, 1], [0, 0, 0], [1, 1, 0], [1, 0, 0]], dtype=float)
    # fold 0: both right (F1 1); fold 1: class 1 missed (F1 of class 0: 2/3, of class 1: 0) → 1/3.
    assert QueryParts(np.array(["a", "b", "c", "d"]), rows, "fold_f1_macro").value() == pytest.approx(2 / 3)


def test_the_parts_table_reads_back_every_metric_in_its_order():
    parts = {
        "R@1": per_query(QIDS, np.array([1.0, 0.0, 0.5])),
        "ECE": QueryParts(QIDS, np.arange(9.0).reshape(3, 3), "calibration_error"),
    }
    table = parts_table(parts)
    assert table.num_rows == 6 and table.column("metric").to_pylist()[:3] == ["ECE"] * 3  # sorted keys
    back = read_parts(table)
    assert set(back) == set(parts)
    for name, original in parts.items():
        assert back[name].statistic == original.statistic
        np.testing.assert_array_equal(back[name].qids, original.qids)
        np.testing.assert_array_equal(back[name].rows, original.rows)
    assert read_parts(parts_table({})) == {} and isinstance(parts_table({}), pa.Table)


def test_malformed_parts_are_refused_naming_the_problem():
    with pytest.raises(ValueError, match="unknown statistic 'median'; valid: mean"):
        QueryParts(QIDS, np.zeros((3, 1)), "median")
    with pytest.raises(ValueError, match=r"\(2, 1\) rows for 3 queries"):
        QueryParts(QIDS, np.zeros((2, 1)), "mean")
