"""The dense strategy's encoder: the real offline MiniLM, the disk cache with a stand-in."""

from pathlib import Path

import numpy as np
import torch

from rankuq.tasks import embeddings

SENTENCES = [
    "How tall is the Eiffel tower?",
    "The Eiffel tower is 330 metres tall.",
    "I like soup",
    "A cross-encoder reads the query and the candidate together.",
    "ok",
]


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


def test_encoder_id_names_the_weights_release_precision_and_length() -> None:
    name, precision, length = embeddings.encoder_id().split("/")
    assert name.startswith("all-MiniLM-L6-v2@") and name != "all-MiniLM-L6-v2@"
    assert (precision, length) == ("bfloat16", "max256")


def test_batches_group_texts_by_token_count() -> None:
    texts = [" ".join(["word"] * (i * 7 % 50 + 1)) for i in range(150)]
    batches = embeddings._batches(embeddings.load_encoder(), texts)
    assert [len(rows) for rows in batches] == [64, 64, 22]
    order = np.concatenate(batches)
    assert sorted(order.tolist()) == list(range(150))
    words = [len(texts[i].split()) for i in order]
    assert words == sorted(words)


def test_parallel_encoding_equals_one_thread_and_restores_threads() -> None:
    texts = SENTENCES * 30  # several batches
    threads = torch.get_num_threads()
    parallel = embeddings.encode(texts)  # one worker per torch thread
    assert torch.get_num_threads() == threads
    torch.set_num_threads(1)
    try:
        assert np.array_equal(embeddings.encode(texts), parallel)
    finally:
        torch.set_num_threads(threads)


def test_same_vectors_as_sentence_transformers_own_encode() -> None:
    ours = embeddings.encode(SENTENCES)
    theirs = embeddings.load_encoder().encode(SENTENCES, convert_to_tensor=True, normalize_embeddings=True)
    assert np.min(np.sum(ours * theirs.float().numpy(), axis=1)) > 0.999


def test_bfloat16_stays_close_to_float32() -> None:
    from sentence_transformers import SentenceTransformer

    from rankuq.backbone import offline_minilm

    full = SentenceTransformer(str(offline_minilm()), device="cpu")
    reference = full.encode(SENTENCES, normalize_embeddings=True)
    assert np.min(np.sum(embeddings.encode(SENTENCES) * reference, axis=1)) > 0.99


def test_texts_truncated_at_max_length() -> None:
    long, longer = (" ".join(["tower"] * words) for words in (300, 600))
    vectors = embeddings.encode([long, longer, "tower"])
    assert np.array_equal(vectors[0], vectors[1])
    assert not np.array_equal(vectors[0], vectors[2])
