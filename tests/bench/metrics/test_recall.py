"""Recall at k: the relevant in the top k over the relevant judged."""

import numpy as np

from rankuq.bench.metrics.recall import recall


def test_recall_counts_relevant_in_the_top_k_over_all_relevant(worked):
    np.testing.assert_array_equal(recall(worked, 1), [0.0, 0.5, 0.0])
    np.testing.assert_array_equal(recall(worked, 3), [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(recall(worked, 100), [1.0, 1.0, 0.0])  # q3: nothing relevant, 0
