"""`sngp`: spectral-normalised features and a random-Fourier-feature GP output layer
(Ye et al., ICASSP 2023, §2.1).

Features: with ``spectral_norm: all`` (the default, as Ye et al., ICASSP 2023: "spectral normalization to the
weights in each residual layer") every linear layer of BERT's transformer blocks and its [CLS]
pooler is bounded to spectral norm ≤ c by power iteration, W ← c·W/‖W‖₂ when ‖W‖₂ > c (eq. 1);
``pooler`` bounds only the feature layers (the pooler; Conv-KNRM's convolutions either way), as
the uncertainty-baselines BERT-SNGP default does.
Output: g(h) = φ(LN(h))ᵀβ with RBF random features (eq. 2–3, LN a parameter-free LayerNorm),
β̂ trained by SGD with the pointwise loss, and the Laplace precision
    P = I + Σᵢ p̂ᵢ(1 − p̂ᵢ) φᵢφᵢᵀ,  p̂ᵢ = σ(φᵢᵀβ̂)
updated in every training forward (eq. 4–5, ``methods.gp``). Predictive: the logit is
N(φᵀβ̂, φᵀP⁻¹φ); ``predictive`` returns its mean and variance with the mean-field probability
σ(m / √(1 + λv)), ``sample`` S draws σ(g_s); scoring keeps the draws as samples and the
mean-field probability as prob_mean.
"""

import math
from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.methods.base import REGISTRY
from rankuq.methods.encoders import SpectralScope
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
    spectral_norm: SpectralScope = Field(
        "all", description="bounded layers: pooler, or all (Ye et al., ICASSP 2023)"
    )
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
    params: SNGPParams  # validated as Params by Method.__init__

    def build_model(self, model: ModelConfig, seed: int) -> Ranker:
        ranker = super().build_model(model, seed)
        for layer in ranker.encoder.feature_layers(self.params.spectral_norm):
            bound_spectral_norm(layer, self.params.c)
        return ranker

    def build_head(self, dim: int) -> SNGPHead:
        return SNGPHead(dim, self.params)

    def probability(self, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
        return mean_field_probability(mean, var, self.params.mean_field)
