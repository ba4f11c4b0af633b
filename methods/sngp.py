"""`sngp`: spectral-normalised features and a random-Fourier-feature GP output layer
(Ye et al., ICASSP 2023, §2.1).

Features: the encoder's feature layers (BERT's [CLS] pooler, Conv-KNRM's convolutions) are bounded
to spectral norm ≤ c by power iteration, W ← c·W/‖W‖₂ when ‖W‖₂ > c (eq. 1), as in the
uncertainty-baselines BERT-SNGP default; the pretrained transformer layers are left unbounded.
Output: g(h) = φ(LN(h))ᵀβ with RBF random features (eq. 2–3, LN a parameter-free LayerNorm),
β̂ trained by SGD with the pointwise loss, and the Laplace precision
    P = I + Σᵢ p̂ᵢ(1 − p̂ᵢ) φᵢφᵢᵀ,  p̂ᵢ = σ(φᵢᵀβ̂)
updated in every training forward (eq. 4–5, ``methods.gp``). Predictive: the logit is
N(φᵀβ̂, φᵀP⁻¹φ); ``predictive`` returns its mean and variance with the mean-field probability
σ(m / √(1 + λv)), ``sample`` S draws σ(g_s).
"""

import math
from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.methods.base import REGISTRY
from rankuq.methods.gp import (
    GPHead,
    GPMethod,
    GPParams,
    RandomFeatures,
    bound_spectral_norm,
    mean_field_probability,
)
from rankuq.methods.ranker import Ranker


class SNGPParams(GPParams):
    c: Annotated[float, Field(gt=0, description="spectral-norm bound of the feature layers")] = 0.95
    lengthscale: Annotated[float, Field(gt=0, description="RBF length scale")] = 2.0
    mean_field: Annotated[float, Field(ge=0, description="mean-field factor λ (π/8)")] = round(math.pi / 8, 4)


class SNGPHead(GPHead):
    """g(h) = φ(LN(h))ᵀβ̂; each training forward adds its batch to the Laplace precision."""

    def __init__(self, dim: int, params: SNGPParams) -> None:
        features = RandomFeatures(dim, "rbf", params.features, params.lengthscale, outputscale=1.0)
        super().__init__(
            nn.Sequential(nn.LayerNorm(dim, elementwise_affine=False), features),
            features.width,
            params.momentum,
        )
        self.beta = nn.Linear(features.width, 1, bias=False)

    def mean_weights(self, cholesky: torch.Tensor) -> torch.Tensor:
        return self.beta.weight[0].double()

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        phi = self.features(h)
        logits = self.beta(phi).squeeze(-1)
        if self.training:
            probability = torch.sigmoid(logits.detach())
            self.observe(phi.detach(), probability * (1 - probability))
        return logits


@REGISTRY.register
class SNGP(GPMethod):
    name = "sngp"
    description = (
        "SNGP: spectral-norm features, RFF GP head, Laplace covariance, mean-field "
        "[Ye et al., AAAI 2023; Ye et al., ICASSP 2023]"
    )
    Params = SNGPParams

    def build_model(self, model: ModelConfig, params: SNGPParams, seed: int) -> Ranker:
        ranker = super().build_model(model, params, seed)
        for layer in ranker.encoder.feature_layers():
            bound_spectral_norm(layer, params.c)
        return ranker

    def build_head(self, dim: int, params: SNGPParams) -> SNGPHead:
        return SNGPHead(dim, params)

    def probability(self, mean: torch.Tensor, var: torch.Tensor, params: SNGPParams) -> torch.Tensor:
        return mean_field_probability(mean, var, params.mean_field)
