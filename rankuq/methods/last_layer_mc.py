"""`last_layer_mc`: MC Dropout on two feed-forward layers after the encoder (Cohen et al., 2021, §3.3, §4.6).

The encoder runs once per pair; only the head is sampled, T times (T = 100; Cohen et al., 2021, use 150):
    s_t(x) = w₂ᵀ (m₂,t ⊙ ReLU(W₁ (m₁,t ⊙ h(x)) + b₁)) + b₂,   m_·,t ~ Bernoulli(1 − p) / (1 − p)
with W₁ ∈ ℝ^{K×K}, w₂ ∈ ℝ^{K×1} and h(x) the encoder's features (BERT-L2/L4 via
``ModelConfig.layers``, or Conv-KNRM's kernel features). Draws are σ(s_t(x)). Trained with pointwise
cross-entropy, pairwise cross-entropy, or the relaxed pairwise hinge ½‖1 − (s₊ − s₋)‖² (§3.2), one
dropout sample per training step. For the pairwise losses σ(s) is a monotone map of an uncalibrated
score (what ERCE and risk-aware ranking use), not a pointwise relevance probability.
"""

from collections.abc import Sequence
from typing import Annotated, Any, cast

import torch
from pydantic import Field
from torch import nn

from rankuq.methods.base import REGISTRY
from rankuq.methods.dropout import MASKS, FastDropout
from rankuq.methods.losses import LossName
from rankuq.methods.ranker import HeadMethod, HeadParams, Ranker


class LastLayerMCParams(HeadParams):
    T: Annotated[int, Field(gt=0, le=10_000, description="head samples per pair")] = 100
    p: Annotated[float, Field(gt=0, lt=1, description="dropout rate of the head")] = 0.1
    loss: LossName = "pointwise_ce"


class DropoutHead(nn.Module):
    """Two feed-forward layers [K, K], [K, 1] with dropout before each."""

    def __init__(self, dim: int, p: float) -> None:
        super().__init__()
        self.layers = nn.Sequential(
            FastDropout(p), nn.Linear(dim, dim), nn.ReLU(), FastDropout(p), nn.Linear(dim, 1)
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return cast(torch.Tensor, self.layers(features).squeeze(-1))


@REGISTRY.register
class LastLayerMC(HeadMethod):
    name = "last_layer_mc"
    description = (
        "last-layer MC Dropout: encoder once, 2 FF layers sampled T = 100 times [Cohen et al., 2021]"
    )
    Params = LastLayerMCParams
    params: LastLayerMCParams  # validated as Params by Method.__init__
    inference_only = frozenset({"T"})
    draws = MASKS

    def training_identity(self) -> dict[str, Any]:
        return {**super().training_identity(), "masks": self.draws}  # training draws them too

    def build_head(self, dim: int) -> DropoutHead:
        return DropoutHead(dim, self.params.p)

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        assert isinstance(model, Ranker)
        model.eval()
        model.head.train()  # dropout sampled in the head only
        features = model.encoder(**inputs)
        scores = model.head(features.repeat(self.params.T, 1))  # T copies in one pass, not T loops
        return torch.sigmoid(scores.view(self.params.T, -1).T)
