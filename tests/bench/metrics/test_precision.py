"""Precision at k: the relevant share of the top k, k counted even where fewer are ranked."""

import numpy as np

from rankuq.bench.metrics.precision import precision


def test_precision_counts_relevant_in_the_top_k_over_k(worked):
    np.testing.assert_array_equal(precision(worked, 1), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(precision(worked, 2), [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(precision(worked, 5), [0.4, 0.4, 0.0])  # over 5, not over 4 or 3 ranked
