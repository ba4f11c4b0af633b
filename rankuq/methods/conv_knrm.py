"""`conv_knrm`: the deterministic Conv-KNRM ranker (S = 1), the non-transformer
backbone of Cohen et al., 2021.

s(x) = wᵀφ(x) + b on Conv-KNRM's kernel-pooled soft-match features φ (``encoders.ConvKNRMFeatures``)
over the backbone's word embeddings (the offline MiniLM's by default); draws σ(s). Its stochastic
counterpart is ``last_layer_mc`` with ``encoder: conv_knrm``.
"""

from collections.abc import Sequence

import torch
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.methods.base import REGISTRY, MethodParams
from rankuq.methods.encoders import ConvKNRMFeatures
from rankuq.methods.losses import LossName
from rankuq.methods.ranker import HeadMethod, Ranker


class ConvKNRMParams(MethodParams):
    loss: LossName = "pointwise_ce"


@REGISTRY.register
class ConvKNRM(HeadMethod):
    name = "conv_knrm"
    description = "Conv-KNRM over MiniLM word embeddings, linear output (S = 1) [Cohen et al., 2021]"
    Params = ConvKNRMParams

    def build_model(self, model: ModelConfig, seed: int) -> Ranker:
        encoder = ConvKNRMFeatures.from_config(model, seed)
        return Ranker(encoder, self.build_head(encoder.dim))

    def build_head(self, dim: int) -> nn.Module:
        return nn.Sequential(nn.Linear(dim, 1), nn.Flatten(0))

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        model.eval()
        return torch.sigmoid(model(**inputs))[:, None]
