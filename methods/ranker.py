"""Rankers built as an encoder plus a scoring head, s(x) = head(encoder(x)), and their method base."""

from abc import abstractmethod
from typing import Any, ClassVar

import torch
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.methods.base import MethodParams, NeuralMethod
from rankuq.methods.encoders import EncoderName, build_encoder
from rankuq.methods.losses import ranking_loss


class Ranker(nn.Module):
    """s(x) = head(encoder(x)): the encoder maps a tokenised pair to features [n, K], the head to a
    relevance logit [n]. Heads that sample call the encoder once and the head many times."""

    def __init__(self, encoder: nn.Module, head: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, **inputs: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(**inputs))


class HeadParams(MethodParams):
    """Parameters every head method has: the encoder its head sits on."""

    encoder: EncoderName = "bert"


class HeadMethod(NeuralMethod):
    """A method whose model is a ``Ranker`` with its own head, so it is trained (and cached) apart.

    ``inference_only`` names the parameters that change only how the trained model is sampled
    (e.g. T); grid cells differing only there share the trained members.
    """

    Params: ClassVar[type[MethodParams]] = HeadParams
    inference_only: ClassVar[frozenset[str]] = frozenset()

    def training_identity(self) -> dict[str, Any]:
        return {"method": self.name, **self.params.model_dump(exclude=set(self.inference_only))}

    def build_model(self, model: ModelConfig, seed: int) -> Ranker:
        encoder = build_encoder(self.params.encoder, model, seed)
        return Ranker(encoder, self.build_head(encoder.dim))

    def loss(self, model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        """The method's ``loss`` parameter (pointwise or pairwise) if it has one, else pointwise CE."""
        return ranking_loss(getattr(self.params, "loss", "pointwise_ce"), model(**inputs), labels, inputs)

    def whole_query_batches(self) -> bool:
        return getattr(self.params, "loss", "pointwise_ce") != "pointwise_ce"

    @abstractmethod
    def build_head(self, dim: int) -> nn.Module:
        """The head on features of width ``dim`` (built after the encoder, under the same seed)."""
