"""Fixtures of the statistics tests: noisy paired samples, constructed normal estimates and small
hand-written rankers' tables. (Tests import nothing from here.)"""

import math
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from rankuq.bench.predictions import predictions_table
from rankuq.bench.statistics import Pooled


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


@pytest.fixture(name="scores_table")
def scores_table_fixture() -> Callable[..., pa.Table]:
    """A deterministic ranker's table: one query per list (q0, q1, …), candidates c0, c1, …"""

    def scores_table(labels: list[list[int]], scores: list[list[float]]) -> pa.Table:
        qid = [f"q{q}" for q, query in enumerate(labels) for _ in query]
        cid = [f"c{j}" for query in labels for j in range(len(query))]
        draws = np.array([[s] for query in scores for s in query])
        return predictions_table(qid, cid, np.concatenate([np.asarray(q) for q in labels]), draws, True)

    return scores_table
