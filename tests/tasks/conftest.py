"""Fixtures of the tasks tests: a small synthetic pool and a stand-in sentence encoder."""

import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rankuq.tasks import embeddings
from rankuq.tasks.pool import Pool, PoolBuilder

WORDS = [f"w{i}" for i in range(16)]  # a small vocabulary, so texts share words


def bag_of_words(texts: list[str]) -> np.ndarray:
    """Unit vectors of hashed word counts: texts sharing words are near, as with a real encoder."""
    vectors = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            vectors[row, zlib.crc32(word.encode()) % 64] += 1.0
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def stub_encoder(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Replaces the MiniLM encoder by ``bag_of_words``; the list counts the texts encoded."""
    calls: list[int] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return bag_of_words(texts)

    monkeypatch.setattr(embeddings, "encode", encode)
    return calls


def synthetic_pool(queries: int = 12, corpus: int = 60, *, native: bool = False, seed: int = 0) -> Pool:
    """Queries q0… with 1–3 relevant documents (graded 1 or 2) among ``corpus`` word-salad texts.

    Every third query has no relevant document (a natural NOTA query). Relevant documents share
    the query's words, so lexical and dense retrieval rank them first. Native pools give each query
    a list of its relevant documents plus 8 others.
    """
    rng = np.random.default_rng(seed)
    builder = PoolBuilder("synthetic", "test", Path("synthetic.tsv"), native=native)
    for row in range(corpus):
        builder.candidate(f"d{row}", " ".join(rng.choice(WORDS, size=4)) + f" doc{row}")
    for q in range(queries):
        words = " ".join(rng.choice(WORDS, size=3))
        relevant = (
            {} if q % 3 == 2 else {int(r): int(rng.integers(1, 3)) for r in rng.choice(corpus, 1 + q % 3)}
        )
        for row in relevant:  # relevant documents echo the query
            builder.texts[row] = f"{words} {builder.texts[row]}"
        judged = dict(relevant)
        if native:
            others = [int(r) for r in rng.permutation(corpus) if r not in relevant][:8]
            judged.update(dict.fromkeys(others, 0))
        builder.query(f"q{q}", [words], judged)
    return builder.build()


@pytest.fixture
def make_pool() -> Callable[..., Pool]:
    return synthetic_pool
