"""The method interface: every ranker turns a batch of candidate rows into [n, S] relevance draws,
and, where its paper scores a closed-form predictive instead of the draws' mean, that [n] mean too."""

import functools
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import pandas as pd
import torch
from pydantic import BaseModel, ConfigDict, ValidationError
from safetensors.torch import load_file
from torch import nn

from rankuq.backbone import (
    CLASSIFIER_FILE,
    ModelConfig,
    build_cross_encoder,
    encode_pairs,
    load_tokenizer,
    save_cross_encoder,
)
from rankuq.errors import RankuqError
from rankuq.methods.losses import cross_entropy
from rankuq.registry import Registry

if TYPE_CHECKING:
    from transformers import PreTrainedModel

# Scores one batch of candidate rows (contract-1 columns) → float array [n, S] of draws, or the
# draws and the [n] predictive P(relevant) that becomes the table's prob_mean (GP heads).
Scores = np.ndarray | tuple[np.ndarray, np.ndarray]
BatchScorer = Callable[[pd.DataFrame], Scores]
BUCKET_SIZE = 64  # rows per forward pass of a neural scorer (a scorer call holds several)
WEIGHTS_FILE = "model.safetensors"  # transformers' name for a save_pretrained model's weights


def inference_device() -> torch.device:
    """Where a model runs: the GPU Ray gave the task, actor or Train worker (it sets
    CUDA_VISIBLE_DEVICES), else the CPU. Given GPUs torch cannot see (logical GPUs, a CPU build of
    torch), the work keeps its GPU share in Ray's books and runs on the CPU, with one warning line."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if os.environ.get("CUDA_VISIBLE_DEVICES"):
        _warn_gpu_unseen()
    return torch.device("cpu")


@functools.cache
def _warn_gpu_unseen() -> None:
    """Once per process (a worker's log): the GPU ids Ray granted that torch cannot use."""
    granted = os.environ["CUDA_VISIBLE_DEVICES"]
    print(
        f"rankuq: warning: given GPU {granted} (CUDA_VISIBLE_DEVICES) but torch {torch.__version__} "
        "sees no CUDA device: running on the CPU",
        file=sys.stderr,
        flush=True,
    )


def length_buckets(
    inputs: dict[str, torch.Tensor], size: int = BUCKET_SIZE
) -> Iterator[tuple[torch.Tensor, dict[str, torch.Tensor]]]:
    """A padded batch's rows sorted by length in chunks of ``size``, each cut to its longest row:
    a scorer call pads once, the forward passes see little padding. Yields (row indices, inputs)."""
    lengths = inputs["attention_mask"].sum(dim=1)
    order = torch.argsort(lengths, stable=True)
    for rows in order.split(size):
        width = int(lengths[rows].max())
        yield rows, {name: tensor[rows, :width] for name, tensor in inputs.items()}


class MethodParams(BaseModel):
    """Per-method grid parameters; unknown keys and non-finite numbers (``c: .inf`` passes ``gt=0``
    and breaks the model later) are rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


Fitted = dict[str, Any]  # a post-hoc method's fitted state (JSON-able), e.g. {"temperature": 1.7}


class Method(ABC):
    """A ranker registered by name, its parameters fixed when it is built (``methods.create``).
    Neural methods fine-tune ``members()`` cross-encoders."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[MethodParams]] = MethodParams
    trains: ClassVar[bool] = True  # fine-tunes cross-encoders (False for lexical baselines)
    probabilistic: ClassVar[bool] = True  # outputs relevance probabilities (ECE applies)
    posthoc: ClassVar[bool] = False  # fitted on the dev lists after training (see PostHocMethod)
    # The version of the random draws behind its scores, part of its predictions' cache key (0: none):
    # bumped, a seed's cached predictions are drawn anew.
    draws: ClassVar[int] = 0

    def __init__(self, params: MethodParams | None = None) -> None:
        if params is not None and not isinstance(params, self.Params):
            raise TypeError(f"{self.name} takes {self.Params.__name__}, not {type(params).__name__}")
        self.params = params if params is not None else self.Params()

    @classmethod
    def parse(cls, raw: dict[str, Any] | None, where: str) -> MethodParams:
        """Validate grid parameters; errors name ``where`` (e.g. "grid.yaml: methods.ensemble")."""
        try:
            return cls.Params(**(raw or {}))
        except ValidationError as error:
            first = error.errors()[0]
            key = ".".join(str(part) for part in first["loc"])
            raise RankuqError(f"{where}.{key}: {first['msg']}") from None

    def members(self) -> int:
        """How many independently trained cross-encoders the method combines."""
        return 1

    @abstractmethod
    def make_scorer(
        self, model: ModelConfig, checkpoints: Sequence[Path], shards: Path, fitted: Fitted | None = None
    ) -> BatchScorer:
        """Build the (stateful) scorer used by inference; ``shards`` is the split being scored and
        ``fitted`` a post-hoc method's state from its fit stage."""


class NeuralMethod(Method):
    """Cross-encoder methods: how they train, then how they sample.

    Training: the defaults fine-tune the plain cross-encoder with pointwise cross-entropy, a model
    that `bert`, `mc_dropout` and `ensemble` share. A method with its own head or loss overrides
    ``build_model`` / ``loss`` and returns its parameters from ``training_identity`` so its
    members are trained (and cached) apart.
    Sampling: the scorer loads the members once, then ``sample`` draws [n, S] per batch.
    """

    # --- how it trains ---

    def training_identity(self) -> dict[str, Any] | None:
        """What makes this method's trained model differ from the shared cross-encoder (None: same)."""
        return None

    def build_model(self, model: ModelConfig, seed: int) -> nn.Module:
        return build_cross_encoder(model, seed)

    def loss(self, model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        """Training loss of one batch; ``labels`` are 0/1 relevance."""
        return cross_entropy(model, inputs, labels)

    def whole_query_batches(self) -> bool:
        """Whether training batches must hold each query's candidates together (pairwise losses)."""
        return False

    def on_epoch_start(self, model: nn.Module) -> None:
        """Called by training before every epoch (e.g. to restart a posterior accumulated per epoch)."""

    # --- how it samples ---
    @abstractmethod
    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Relevance-probability draws [n, S] for one tokenised batch."""

    def draw(
        self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The draws [n, S] and the predictive P(relevant) [n] a method scores as prob_mean, or None
        where prob_mean is the draws' mean (every method but the GP heads)."""
        return self.sample(models, inputs), None

    def make_scorer(
        self, model: ModelConfig, checkpoints: Sequence[Path], shards: Path, fitted: Fitted | None = None
    ) -> BatchScorer:
        return self.batch_scorer(model, self.load_models(model, checkpoints, fitted))

    def batch_scorer(self, model: ModelConfig, models: Sequence[nn.Module]) -> BatchScorer:
        """Score batches with ``models`` as they are (loaded, or still training)."""
        tokenizer = load_tokenizer(model)
        device = next(models[0].parameters()).device

        @torch.inference_mode()
        def score(batch: pd.DataFrame) -> Scores:
            contexts = [list(turns) for turns in batch["context"]]
            inputs = encode_pairs(tokenizer, contexts, batch["text"].tolist(), model.max_length)
            inputs = {name: tensor.to(device) for name, tensor in inputs.items()}
            rows, draws, means = zip(
                *((chunk, *self.draw(models, part)) for chunk, part in length_buckets(inputs)),
                strict=True,
            )
            order = torch.cat(rows)
            out = torch.empty_like(torch.cat(draws))
            out[order] = torch.cat(draws)
            if means[0] is None:
                return out.float().cpu().numpy()
            mean = torch.empty_like(torch.cat(means))
            mean[order] = torch.cat(means)
            return out.float().cpu().numpy(), mean.double().cpu().numpy()

        return score

    def load_models(
        self, model: ModelConfig, checkpoints: Sequence[Path], fitted: Fitted | None = None
    ) -> list[nn.Module]:
        """The models ``sample`` receives: the trained members, loaded once per scorer; with none
        (``train.epochs: 0``), the backbone as given, its own head (the grid admits only the methods
        that score it so)."""
        if not checkpoints:
            given: nn.Module = build_cross_encoder(model, seed=0, given_head=True)
            return [given.to(inference_device())]
        return [self.load_member(model, path) for path in checkpoints]

    # --- how a trained member is kept: a Hugging Face folder ---

    def save_member(self, member: nn.Module, model: ModelConfig, folder: Path) -> None:
        """``member`` as a one-logit CrossEncoder folder (``save_cross_encoder``: safetensors weights,
        config.json) with its tokenizer: sentence-transformers' ``CrossEncoder(folder)`` and
        ``AutoModelForSequenceClassification.from_pretrained(folder)`` load it."""
        save_cross_encoder(cast("PreTrainedModel", member), folder)  # the cross-encoder (build_model)
        load_tokenizer(model).save_pretrained(folder)

    def member_state(self, member: nn.Module, folder: Path) -> dict[str, torch.Tensor]:
        """The state dict of ``member`` (freshly built) that ``save_member`` wrote to ``folder``: its
        2-way output layer from ``CLASSIFIER_FILE`` (members saved before it have it in the weights)."""
        state = load_file(folder / WEIGHTS_FILE)
        two_way = folder / CLASSIFIER_FILE
        return state | load_file(two_way) if two_way.is_file() else state

    def load_member(self, model: ModelConfig, folder: Path) -> nn.Module:
        """A trained member from its folder (``save_member``)."""
        member = self.build_model(model, seed=0)
        member.load_state_dict(self.member_state(member, folder))
        return member.to(inference_device())


def relevance_probability(logits: torch.Tensor) -> torch.Tensor:
    """P(relevant) from the 2-way head's logits."""
    return torch.softmax(logits.float(), dim=-1)[..., 1]


class PostHocMethod(NeuralMethod):
    """A calibration map fitted on the dev lists over trained members' outputs (Guo et al. 2017's
    temperature scaling, …). The grid's fit stage calls ``fit`` once per cell and caches its state;
    the scorer gets that state back (``load_models(…, fitted)``). It reads nothing but its inputs."""

    posthoc = True

    @abstractmethod
    def fit(self, model: ModelConfig, checkpoints: Sequence[Path], dev: pd.DataFrame) -> Fitted:
        """The fitted state from the dev candidate rows (contract-1 columns)."""


REGISTRY: Registry[type[Method]] = Registry("method", plugins="rankuq.methods", base=Method)


def create(
    name: str, params: MethodParams | dict[str, Any] | None = None, where: str | None = None
) -> Method:
    """The registered method ``name`` with its parameters fixed (validated from a dict; errors name
    ``where``, by default ``methods.<name>``)."""
    kind = REGISTRY.get(name)
    if not isinstance(params, MethodParams):
        params = kind.parse(params, where or f"methods.{name}")
    return kind(params)
