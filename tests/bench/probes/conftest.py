"""Fixtures of the probe tests: builders of small hand-written tables and the real WikiQA-based table
of tests/bench/conftest.py as a deterministic ranker, and the abstention probe on that pair
(``transfer``). (Tests import nothing from here.)"""

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pytest

from rankuq.bench.predictions import predictions_table
from rankuq.bench.probes import ProbeResult, abstention, scored_lists


def lists_table(
    labels: Sequence[Sequence[int]], draws: Sequence[Sequence[Sequence[float]]], probabilistic: bool = True
) -> pa.Table:
    """One query per list (qids q0, q1, … in order), candidates c0, c1, … with the given labels
    and draws (one inner list of S draws per candidate; S = 1 for a deterministic ranker)."""
    qid = [f"q{q}" for q, lab in enumerate(labels) for _ in lab]
    cid = [f"c{j}" for lab in labels for j in range(len(lab))]
    flat = [d for query in draws for d in query]
    return predictions_table(
        qid, cid, np.concatenate([np.asarray(lab) for lab in labels]), np.array(flat), probabilistic
    )


def scores_table(labels: Sequence[Sequence[int]], scores: Sequence[Sequence[float]], **kw) -> pa.Table:
    """A deterministic ranker's table (S = 1)."""
    return lists_table(labels, [[[s] for s in query] for query in scores], **kw)


@pytest.fixture(name="lists_table")
def lists_table_fixture() -> Callable[..., pa.Table]:
    return lists_table


@pytest.fixture(name="scores_table")
def scores_table_fixture() -> Callable[..., pa.Table]:
    return scores_table


@pytest.fixture(scope="session")
def wikiqa_deterministic(wikiqa: pa.Table) -> pa.Table:
    """The same ranker's mean as a deterministic ranker (S = 1)."""
    means = wikiqa["prob_mean"].to_numpy()
    return predictions_table(
        wikiqa["qid"].to_pylist(), wikiqa["cid"].to_pylist(), wikiqa["label"].to_numpy(), means[:, None]
    )


@pytest.fixture(scope="session")
def transfer(wikiqa, wikiqa_deterministic) -> tuple[ProbeResult, np.ndarray]:
    """dev = the stochastic table, test = the deterministic one (the grids' setting: one part),
    and the usable test queries' qids."""
    test = scored_lists(wikiqa_deterministic)
    result = abstention.probe(
        test, dev=scored_lists(wikiqa), confidences=["u_max", "u_std", "u_lin"], names=["AP", "RR"]
    )
    return result, test.qids[(test.ranked.n_relevant > 0) & (test.length >= 2)]
