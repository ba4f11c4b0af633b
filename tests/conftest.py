"""Shared fixtures: one Ray session for the whole suite (start-up costs seconds), tiny models."""

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("RAY_DEDUP_LOGS", "0")


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's cross-encoder checkpoint: a tiny random 2-layer BERT with one relevance logit (as
    sentence-transformers saves a CrossEncoder), saved with
    ``save_pretrained`` beside MiniLM's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from rankuq.backbone import offline_minilm

    torch.manual_seed(11)
    shape: dict[str, Any] = {  # Any: transformers' typed configs take these as **kwargs
        "vocab_size": 30522,
        "hidden_size": 32,
        "num_attention_heads": 2,
        "intermediate_size": 64,
    }
    # initialised wide (std 0.5, not 0.02) so that its σ(z) spread across (0, 1), not all ≈ 0.5
    config = BertConfig(**{**shape, "num_hidden_layers": 2, "num_labels": 1, "initializer_range": 0.5})
    model = BertForSequenceClassification(config)
    folder = tmp_path_factory.mktemp("cross-encoder")
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(offline_minilm()).save_pretrained(folder)
    return folder
