"""Power (rankuq.bench.statistics.power): the minimum detectable effect and the data a
target needs, by hand and against a larger sample."""

import math

import numpy as np
import pytest
from scipy import stats

from rankuq.bench import statistics as st
from rankuq.bench.statistics import (
    Effect,
    minimum_detectable_effect,
    paired_bootstrap,
    scale_for_power,
)

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)  # 2.8016


def _effect(
    se: float, between: float, within: float, design: st.Design, seeds: int = 3, queries: int = 100
) -> Effect:
    """A constructed effect: only the numbers scale_for_power reads matter."""
    empty = np.array([])
    return Effect(
        0.0,
        -1,
        1,
        -1,
        1,
        se,
        1.0,
        1.0,
        False,
        seeds,
        (queries,) * seeds,
        design,
        empty,
        empty,
        between,
        within,
        True,
    )


def test_minimum_detectable_effect_and_scale_for_power(normal) -> None:
    assert minimum_detectable_effect(normal(0.0, 0.01)) == pytest.approx(0.028016, abs=1e-6)
    # SE 0.02 against a target of 0.02: factor = Z² = 7.849; room 1/7.849 = 0.1274.
    factor = Z**2
    nested = scale_for_power(_effect(0.02, 0.25, 0.75, "nested"), 0.02)
    assert nested.factor == pytest.approx(factor) and nested.between_share == pytest.approx(0.25)
    assert nested.seeds == math.ceil(3 * factor) == 24
    assert nested.queries is None  # the seeds' part 0.25 alone exceeds the room
    few = scale_for_power(_effect(0.02, 0.05, 0.95, "nested"), 0.02)
    assert few.queries == math.ceil(100 * 0.95 / (1 / factor - 0.05)) == 1228
    crossed = scale_for_power(_effect(0.02, 0.05, 0.95, "crossed"), 0.02)
    assert crossed.seeds is None and crossed.queries == 1228  # more seeds cannot beat the queries' part
    easy = scale_for_power(_effect(0.02, 0.05, 0.95, "crossed"), 0.1)  # factor Z²/25 = 0.314
    assert easy.seeds == math.ceil(3 * 0.05 / (25 / factor - 0.95)) == 1
    assert easy.queries == math.ceil(100 * 0.95 / (25 / factor - 0.05)) == 31
    none = scale_for_power(_effect(0.02, 0.05, 0.95, "nested"), 0.0)
    assert none.factor == math.inf and none.seeds is None and none.queries is None


def test_scale_for_power_predicts_the_standard_error_of_more_queries(noisy_pair) -> None:
    rng = np.random.default_rng(12)
    method, reference = noisy_pair(1, 100, 0.0, rng)
    small = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 2000)
    target = 0.02
    scale = scale_for_power(small, target)
    assert scale.queries == math.ceil(100 * scale.factor)  # one seed: all variance is the queries'
    method, reference = noisy_pair(1, scale.queries, 0.0, rng)
    large = paired_bootstrap([method, reference], [st.mean()] * 2, st.difference(), 2000)
    assert minimum_detectable_effect(large) == pytest.approx(target, rel=0.12)
