"""Fixtures of the probe tests: builders of small hand-written tables and a real WikiQA-based
table. (Tests import nothing from here: the builders come as fixtures.)"""

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pytest

import tasks
from bench.predictions import predictions_table


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
def wikiqa() -> pa.Table:
    """The real WikiQA test split (633 questions, 6,165 sentences, real NOTA questions) scored by
    a stochastic stand-in ranker: 10 draws of σ(5·overlap − 2.5 + noise), overlap = the share of
    question words in the sentence, noise with a per-candidate spread (seeded)."""
    candidates = tasks.get("wikiqa")().load("test", tasks.data_root())
    questions = [turns[0].lower().split() for turns in candidates["context"].to_pylist()]
    sentences = [text.lower().split() for text in candidates["text"].to_pylist()]
    overlap = np.array(
        [len(set(q) & set(s)) / len(set(q)) for q, s in zip(questions, sentences, strict=True)]
    )
    rng = np.random.default_rng(0)
    spread = 0.3 + 0.7 * rng.random((overlap.size, 1))
    logits = 5 * overlap[:, None] - 2.5 + spread * rng.normal(size=(overlap.size, 10))
    return predictions_table(
        candidates["qid"].to_pylist(),
        candidates["cid"].to_pylist(),
        candidates["label"].to_numpy(),
        1 / (1 + np.exp(-logits)),
    )


@pytest.fixture(scope="session")
def wikiqa_deterministic(wikiqa: pa.Table) -> pa.Table:
    """The same ranker's mean as a deterministic ranker (S = 1)."""
    means = wikiqa["prob_mean"].to_numpy()
    return predictions_table(
        wikiqa["qid"].to_pylist(), wikiqa["cid"].to_pylist(), wikiqa["label"].to_numpy(), means[:, None]
    )
