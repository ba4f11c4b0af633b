"""Fixtures shared by the bench tests: a real WikiQA predictions table."""

import numpy as np
import pyarrow as pa
import pytest

import tasks
from bench.predictions import predictions_table


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
