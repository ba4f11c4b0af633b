"""Rankers built as an encoder plus a scoring head, s(x) = head(encoder(x)), and their method base."""

from abc import abstractmethod
from pathlib import Path
from typing import Annotated, Any, ClassVar, cast

import torch
from pydantic import Field
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn.utils import parametrize

from rankuq.backbone import ModelConfig, load_tokenizer
from rankuq.methods.base import WEIGHTS_FILE, MethodParams, NeuralMethod, split_groups
from rankuq.methods.encoders import BertFeatures, ConvKNRMFeatures, EncoderName, build_encoder
from rankuq.methods.losses import ranking_loss


class Ranker(nn.Module):
    """s(x) = head(encoder(x)): the encoder maps a tokenised pair to features [n, K], the head to a
    relevance logit [n]. Heads that sample call the encoder once and the head many times."""

    def __init__(self, encoder: BertFeatures | ConvKNRMFeatures, head: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, **inputs: torch.Tensor) -> torch.Tensor:
        return cast(torch.Tensor, self.head(self.encoder(**inputs)))


HEAD_FILE = "rankuq-head.safetensors"  # a ranker's weights outside its transformer (head, bounds)
TRANSFORMER = "encoder.bert."  # where a ranker's transformer sits in its state dict


def plain_transformer_state(ranker: Ranker) -> dict[str, torch.Tensor] | None:
    """The state dict of the ranker's transformer with spectral bounds folded into its weights (the
    weights it computes with), or None for an encoder that is no transformer (Conv-KNRM)."""
    if not isinstance(ranker.encoder, BertFeatures):
        return None
    transformer = ranker.encoder.bert
    state = {key: value for key, value in transformer.state_dict().items() if ".parametrizations." not in key}
    with torch.no_grad():
        for name, module in transformer.named_modules():
            if not parametrize.is_parametrized(module):
                continue
            for tensor, bounds in module.parametrizations.items():
                training = bounds.training
                bounds.eval()  # folding runs no power-iteration step
                state[f"{name}.{tensor}"] = getattr(module, tensor).detach().clone()
                bounds.train(training)
    return state


class HeadParams(MethodParams):
    """Parameters every head method has: the encoder its head sits on."""

    encoder: EncoderName = "bert"
    head_lr: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None, description="learning rate of the head, which starts from nothing (None: train.lr)"
    )


class HeadMethod(NeuralMethod):
    """A method whose model is a ``Ranker`` with its own head, so it is trained (and cached) apart.

    ``inference_only`` names the parameters that change only how the trained model is sampled
    (e.g. T); grid cells differing only there share the trained members.
    """

    Params: ClassVar[type[MethodParams]] = HeadParams
    inference_only: ClassVar[frozenset[str]] = frozenset()

    def training_identity(self) -> dict[str, Any]:
        # head_lr left unset is left out, so members cached before the option keep their keys
        unset = {"head_lr"} if self.head_lr() is None else set()
        return {"method": self.name, **self.params.model_dump(exclude=set(self.inference_only) | unset)}

    def parameter_groups(self, model: nn.Module, head_lr: float | None = None) -> list[dict[str, Any]]:
        """The head at the method's ``head_lr``, else at the grid's (``head_lr``), else with the rest:
        a head trained from nothing on a pretrained encoder moves too little at the encoder's rate
        in the few hundred steps of a grid's member."""
        rate = self.head_lr() or head_lr
        if rate is None:
            return [{"params": list(model.parameters())}]
        assert isinstance(model, Ranker)
        return split_groups(model, model.head, rate)

    def head_lr(self) -> float | None:
        """``head_lr`` of a method whose parameters are ``HeadParams`` (Conv-KNRM's are not)."""
        return self.params.head_lr if isinstance(self.params, HeadParams) else None

    def build_model(self, model: ModelConfig, seed: int) -> Ranker:
        params = self.params
        assert isinstance(params, HeadParams)  # a method whose parameters name no encoder builds its own
        encoder = build_encoder(params.encoder, model, seed)
        return Ranker(encoder, self.build_head(encoder.dim))

    def loss(self, model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        """The method's ``loss`` parameter (pointwise or pairwise) if it has one, else pointwise CE."""
        return ranking_loss(getattr(self.params, "loss", "pointwise_ce"), model(**inputs), labels, inputs)

    def whole_query_batches(self) -> bool:
        return getattr(self.params, "loss", "pointwise_ce") != "pointwise_ce"

    def save_member(self, member: nn.Module, model: ModelConfig, folder: Path) -> None:
        """The transformer as a ``save_pretrained`` folder (AutoModel classes load it, a new
        classification head where they add one) and the rest of the ranker's state (its head, the
        spectral bounds' unbounded weights and power-iteration vectors) in ``HEAD_FILE`` beside it."""
        assert isinstance(member, Ranker)
        transformer = plain_transformer_state(member)
        kept: set[str] = set()
        if transformer is not None:
            assert isinstance(member.encoder, BertFeatures)  # the one encoder with a transformer state
            member.encoder.bert.save_pretrained(folder, state_dict=transformer)
            kept = {TRANSFORMER + key for key in transformer}
        load_tokenizer(model).save_pretrained(folder)
        rest = {key: value.contiguous() for key, value in member.state_dict().items() if key not in kept}
        save_file(rest, folder / HEAD_FILE)

    def member_state(self, member: nn.Module, folder: Path) -> dict[str, torch.Tensor]:
        state = load_file(folder / HEAD_FILE)
        if (folder / WEIGHTS_FILE).exists():
            wanted = member.state_dict().keys()  # a bounded layer's folded weight is not the ranker's
            saved = ((TRANSFORMER + key, value) for key, value in load_file(folder / WEIGHTS_FILE).items())
            state |= {key: value for key, value in saved if key in wanted}
        return state

    @abstractmethod
    def build_head(self, dim: int) -> nn.Module:
        """The head on features of width ``dim`` (built after the encoder, under the same seed)."""
