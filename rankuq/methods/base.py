"""The method interface: every ranker turns a batch of candidate rows into [n, S] relevance draws,
and, where its paper scores a closed-form predictive instead of the draws' mean, that [n] mean too."""

import functools
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
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
TokenScorer = Callable[[dict[str, torch.Tensor]], Scores]  # the same, from the rows' token ids
Batch = tuple[dict[str, torch.Tensor], torch.Tensor]  # a training batch's tokenized inputs and 0/1 labels
BUCKET_SIZE = 64  # rows per forward pass on a CPU (a scorer call holds several)
# Rows per forward pass on a GPU at most: the plain loop's batch of limit.json (shared/gpu/h100-2026-11-27),
# 136k pairs/s in bf16 on an H100 against 18k at 64. Fewer where free memory cannot hold them.
GPU_ROWS = 1024
GPU_MEMORY_SHARE = 0.5  # of the free memory, what a scorer's forward passes may take (the rest: others)
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


def gpu_rows(models: Sequence[nn.Module], max_length: int, device: torch.device) -> int:
    """Rows per forward pass on ``device`` (a GPU): ``GPU_ROWS``, or fewer where half its free memory
    cannot hold their activations at ``max_length`` tokens (``activation_bytes``)."""
    free, _ = torch.cuda.mem_get_info(device)
    fits = int(free * GPU_MEMORY_SHARE) // activation_bytes(models[0], max_length)
    return max(1, min(GPU_ROWS, fits))


def activation_bytes(model: nn.Module, length: int) -> int:
    """A generous bound on one row's live activations in an inference pass: one transformer layer's
    tensors (hidden states, the feed-forward's inner ones, the attention scores) in fp32, four times
    over for the kernels' workspaces. Read from the first Hugging Face config in ``model``; BERT-large's
    sizes where there is none."""
    config = next((m.config for m in model.modules() if hasattr(m, "config")), None)
    hidden = getattr(config, "hidden_size", 1024)
    heads = getattr(config, "num_attention_heads", 16)
    inner = getattr(config, "intermediate_size", 4 * hidden)
    return 4 * 4 * length * (inner + 4 * hidden + heads * length)


def half_weights(model: nn.Module, weights: torch.dtype) -> nn.Module:
    """``model`` with its floating-point weights in ``weights`` (in place)."""
    return model if weights == torch.float32 else model.to(weights)


def padded_inputs(batch: pd.DataFrame, pad: int) -> dict[str, torch.Tensor]:
    """The model inputs of ``batch``'s cached id columns, padded on the right to the longest row, as
    ``encode_pairs`` pads them (attention mask 1 over each row's ids): the same tensors, so the same
    numbers as tokenising the batch."""
    lengths = batch["input_ids"].map(len).to_numpy(dtype=np.int64)
    mask = np.arange(lengths.max(initial=0)) < lengths[:, None]  # row-major: the ids' own order

    def matrix(column: str, fill: int) -> torch.Tensor:
        out = np.full(mask.shape, fill, dtype=np.int64)
        out[mask] = np.concatenate([*batch[column], np.empty(0, dtype=np.int64)])
        return torch.from_numpy(out)

    inputs = {
        "input_ids": matrix("input_ids", pad),
        "attention_mask": torch.from_numpy(mask.astype(np.int64)),
    }
    return inputs | ({"token_type_ids": matrix("token_type_ids", 0)} if "token_type_ids" in batch else {})


def in_order(values: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """``values`` of the rows ``order`` names, put back in the rows' order."""
    out = torch.empty_like(values)
    out[order] = values
    return out


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

    # Whether training calls ``refit`` after every epoch (False: the pass is skipped, nothing runs).
    refits: ClassVar[bool] = False

    def refit(self, model: nn.Module, batches: Iterable[Batch], seed: int) -> None:
        """Called by training after every epoch, before the dev lists are scored, with every training
        batch (eval mode, no gradient, the training's random numbers set aside): a head whose output
        layer is a posterior over the training data (``pg_gp``) conditions it on them under the encoder
        as the epoch left it. ``seed`` differs by epoch."""

    def epoch_refit(self, model: nn.Module) -> Callable[[Iterable[Batch], int], None] | None:
        """``refit`` of ``model``, as training's ``refit`` takes it; None where the method refits nothing."""
        return functools.partial(self.refit, model) if self.refits else None

    def parameter_groups(self, model: nn.Module, head_lr: float | None = None) -> list[dict[str, Any]]:
        """The optimiser's parameter groups; a group with its own ``lr`` keeps it, the rest take the
        grid's ``train.lr``. ``head_lr`` (the grid's ``train.head_lr``) gives the cross-encoder's new
        relevance head, its ``classifier``, a rate of its own: it starts from nothing."""
        if head_lr is None:
            return [{"params": list(model.parameters())}]
        head = getattr(model, "classifier", None)
        if not isinstance(head, nn.Module):
            raise RankuqError(
                f"train.head_lr: {type(model).__name__} has no classifier module to give it; drop head_lr"
            )
        return split_groups(model, head, head_lr)

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
        self,
        model: ModelConfig,
        checkpoints: Sequence[Path],
        shards: Path,
        fitted: Fitted | None = None,
        weights: torch.dtype = torch.float32,
    ) -> BatchScorer:
        """The scorer of the trained members, their weights cast to ``weights`` (bfloat16: what a GPU's
        bf16 scoring holds, instead of autocasting fp32 weights in every pass)."""
        loaded = self.load_models(model, checkpoints, fitted)
        return self.batch_scorer(model, [self.inference_model(member, weights) for member in loaded])

    def inference_model(self, member: nn.Module, weights: torch.dtype) -> nn.Module:
        """A loaded member made ready for scoring only (never for training on): its weights in
        ``weights``."""
        return half_weights(member, weights)

    def forward_rows(self, device: torch.device, models: Sequence[nn.Module], max_length: int) -> int:
        """Rows per forward pass: ``BUCKET_SIZE`` on a CPU; on a GPU ``gpu_rows``, but exactly
        ``GPU_ROWS`` for a method with random draws, whose masks depend on the rows they are drawn
        with (so its numbers never depend on the card's free memory)."""
        if device.type != "cuda":
            return BUCKET_SIZE
        return GPU_ROWS if self.draws else gpu_rows(models, max_length, device)

    def batch_scorer(self, model: ModelConfig, models: Sequence[nn.Module]) -> BatchScorer:
        """Score batches with ``models`` as they are (loaded, or still training): one tokeniser call
        per batch, or the batch's cached ids where it carries them, then ``token_scorer``."""
        tokenizer = load_tokenizer(model)
        score_tokens = self.token_scorer(model, models)

        def score(batch: pd.DataFrame) -> Scores:
            if "input_ids" in batch:  # the ids cached beside the shards (bench.engine.tokens)
                return score_tokens(padded_inputs(batch, tokenizer.pad_token_id))
            contexts = [list(turns) for turns in batch["context"]]
            return score_tokens(encode_pairs(tokenizer, contexts, batch["text"].tolist(), model.max_length))

        return score

    def token_scorer(self, model: ModelConfig, models: Sequence[nn.Module]) -> TokenScorer:
        """Score tokenised rows (padded to their longest) with ``models``: sorted by length into forward
        passes of ``forward_rows`` rows, each cut to its own longest row; the draws returned in the
        rows' order."""
        device = next(models[0].parameters()).device
        size = self.forward_rows(device, models, model.max_length)

        @torch.inference_mode()
        def score(inputs: dict[str, torch.Tensor]) -> Scores:
            # Cut on the host, where the lengths are: no device sync per forward pass.
            rows, draws, means = zip(
                *(
                    (chunk, *self.draw(models, {name: t.to(device) for name, t in part.items()}))
                    for chunk, part in length_buckets(inputs, size)
                ),
                strict=True,
            )
            order = torch.cat(rows)
            out = in_order(torch.cat(draws).float().cpu(), order).numpy()
            if means[0] is None:
                return out
            return out, in_order(torch.cat(means).double().cpu(), order).numpy()

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
        config.json) with its tokenizer, which records ``max_length``: sentence-transformers'
        ``CrossEncoder(folder)`` and ``AutoModelForSequenceClassification.from_pretrained(folder)``
        load it."""
        save_cross_encoder(cast("PreTrainedModel", member), folder)  # the cross-encoder (build_model)
        tokenizer = load_tokenizer(model)
        # The length it was trained at, recorded where CrossEncoder and `rankuq evaluate --model` read it.
        tokenizer.model_max_length = model.max_length
        tokenizer.save_pretrained(folder)

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


def split_groups(model: nn.Module, head: nn.Module, head_lr: float) -> list[dict[str, Any]]:
    """Two parameter groups: ``head``'s weights at ``head_lr``, the rest of ``model``'s at the grid's rate."""
    mine = list(head.parameters())
    rest = [weight for weight in model.parameters() if all(weight is not own for own in mine)]
    return [{"params": rest}, {"params": mine, "lr": head_lr}]
