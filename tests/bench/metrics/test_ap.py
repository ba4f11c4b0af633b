"""Average precision: Σ P@r over the ranks r of relevant candidates, over the relevant judged."""

import numpy as np

from rankuq.bench.metrics.ap import average_precision


def test_ap_averages_the_precision_at_each_relevant_rank(worked):
    # q1: relevant at 2 and 4: (1/2 + 2/4) / 2; q2: at 1 and 3: (1 + 2/3) / 2; q3: nothing relevant.
    np.testing.assert_allclose(average_precision(worked), [0.5, 5 / 6, 0.0], rtol=1e-12)


def test_relevant_candidates_below_the_cutoff_stay_in_the_denominator(worked):
    np.testing.assert_allclose(average_precision(worked, 2), [0.25, 0.5, 0.0], rtol=1e-12)
    np.testing.assert_allclose(average_precision(worked, 1), [0.0, 0.5, 0.0], rtol=1e-12)
