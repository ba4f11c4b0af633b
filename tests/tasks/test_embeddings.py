"""The dense strategy's encoder: the real offline MiniLM once, the disk cache with a stand-in."""

from pathlib import Path

import numpy as np

from tasks import embeddings


def test_real_encoder_unit_vectors_and_meaning() -> None:
    vectors = embeddings.encode(
        ["How tall is the Eiffel tower?", "Height of the Eiffel tower", "I like soup"]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.3


def test_cache_encodes_once_per_text_set(tmp_path: Path, stub_encoder: list[int]) -> None:
    texts = ["one text", "another text"]
    first = embeddings.embed(texts, tmp_path)
    assert np.array_equal(embeddings.embed(texts, tmp_path), first)
    assert stub_encoder == [2]
    embeddings.embed([*texts, "a third"], tmp_path)
    assert stub_encoder == [2, 3]
    assert len(list(tmp_path.glob("*.npy"))) == 2
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".")]


def test_no_cache_dir_always_encodes(stub_encoder: list[int]) -> None:
    embeddings.embed(["x"])
    embeddings.embed(["x"])
    assert stub_encoder == [1, 1]


def test_encoder_id_names_the_weights_release() -> None:
    assert embeddings.encoder_id().startswith("all-MiniLM-L6-v2@")
