"""Fixtures of the statistics tests: noisy paired samples and constructed normal estimates. (Tests
import nothing from here.)"""

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from rankuq.bench.findings.statistics import Pooled


def noisy_pair(n_seeds: int, n: int, shift: float, rng: np.random.Generator) -> tuple[list, list]:
    """Method and reference per seed: noisy queries (sd 1), the method `shift` higher plus noise."""
    reference = [rng.normal(0.5, 1.0, (n, 1)) for _ in range(n_seeds)]
    method = [r + shift + rng.normal(0, 0.3, (n, 1)) for r in reference]
    return method, reference


def normal(d: float, se: float) -> Pooled:
    """A constructed estimate: 95 % CI d ± 1.96 se, 90 % d ± 1.645 se, p two-sided normal."""
    return Pooled(d, se, float(2 * stats.norm.sf(abs(d) / se)), math.nan, math.nan, 1, (), ())


@pytest.fixture(name="noisy_pair")
def noisy_pair_fixture() -> Callable[..., tuple[list, list]]:
    return noisy_pair


@pytest.fixture(name="normal")
def normal_fixture() -> Callable[[float, float], Pooled]:
    return normal
