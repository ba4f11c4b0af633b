"""Reciprocal rank: 1 / the rank of the first relevant candidate."""

import numpy as np

from rankuq.bench.metrics.rr import reciprocal_rank


def test_rr_is_one_over_the_first_relevant_rank_and_0_without_one(worked):
    np.testing.assert_array_equal(reciprocal_rank(worked), [0.5, 1.0, 0.0])
