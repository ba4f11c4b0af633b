"""nDCG: graded gains discounted by log2(rank + 1), over the ideal ranking's."""

import numpy as np

from rankuq.bench.metrics.ndcg import ndcg


def test_ndcg_of_graded_and_binary_lists(worked):
    # q1: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3); q2: (2 + 1/log2 4) / (2 + 1/log2 3); q3: 0.
    q1 = (1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3))
    q2 = (2 + 1 / np.log2(4)) / (2 + 1 / np.log2(3))
    np.testing.assert_allclose(ndcg(worked), [q1, q2, 0.0], rtol=1e-12)
    np.testing.assert_allclose(ndcg(worked)[:2], [0.650921, 0.950234], atol=1e-6)


def test_the_cutoff_applies_to_the_ranking_and_the_ideal(worked):
    np.testing.assert_allclose(ndcg(worked, 1), [0.0, 1.0, 0.0], rtol=1e-12)
    q1 = (1 / np.log2(3)) / (1 + 1 / np.log2(3))
    np.testing.assert_allclose(ndcg(worked, 2), [q1, 2 / (2 + 1 / np.log2(3)), 0.0], rtol=1e-12)
