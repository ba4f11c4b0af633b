"""`sngp`: spectral-normalised features and a random-Fourier-feature GP output layer
(Ye et al., ICASSP 2023, §2.1).

Features: each bounded linear layer W ← c·W/‖W‖₂ when ‖W‖₂ > c, by power iteration (eq. 1). With
``spectral_norm: pooler`` (the default) only the layer that makes the feature is bounded (BERT's
[CLS] pooler; Conv-KNRM's convolutions), as uncertainty-baselines' BERT-SNGP does by default;
``all`` bounds every linear layer of the transformer blocks too, as Ye et al. word it ("spectral
normalization to the weights in each residual layer").
Output: g(h) = φ(LN(h))ᵀβ with RBF random features (eq. 2–3, LN a parameter-free LayerNorm),
β̂ trained by SGD with the pointwise loss, and the Laplace precision
    P = I + Σᵢ p̂ᵢ(1 − p̂ᵢ) φᵢφᵢᵀ,  p̂ᵢ = σ(φᵢᵀβ̂)
updated in every training forward (eq. 4–5, ``methods.gp``). Predictive: the logit is
N(φᵀβ̂, φᵀP⁻¹φ); ``predictive`` returns its mean and variance with the mean-field probability
σ(m / √(1 + λv)), ``sample`` S draws σ(g_s); scoring keeps the draws as samples and the
mean-field probability as prob_mean.

Where the defaults depart from the papers' wording, and why (measured on ClariQ, gp.yaml's recipe,
seed 0, 94 training steps; bert R@1 0.705, BM25 0.426; docs/methods.md):
- Bounded layers: ``pooler``, not ``all``. Pretrained matrices have spectral norms of 0.35–11.7
  (median 5.4); bounding all 37 of MiniLM's by 0.95 shrinks them 5–12× before training, and the
  encoder's features collapse (their spread across pairs falls from 0.046 to 0.003 a coordinate;
  every pair then lies within 1.3 of every other after the LayerNorm and the kernel is ≈ 1 for
  all of them): R@1 0.34 with ``all``.
- Length scale ℓ = √K (K the feature width) unless given. After the LayerNorm each coordinate has
  unit variance, so ‖h − h′‖² = 2K(1 − ρ) and the kernel exp(−(1 − ρ)K/ℓ²) depends on the features'
  correlation ρ alone, on any backbone; ℓ = 2 (the earlier default) made it ≈ 0 between any two
  pairs (they lie about 27 apart on 384 dimensions) and the GP could not generalise. √K is also
  what uncertainty-baselines' BERT-SNGP uses in effect (frequencies of standard deviation 0.05
  with input scale 1/√2 on 768 dimensions: ℓ ≈ 28 ≈ √768).
- β has a learning rate of its own (``head_lr``, 3e-2): it starts from nothing, and with features
  of norm ≈ 1 (√(2/L) scaling, eq. 3) a step at the encoder's 5e-5 moves a logit by about 0.0015.
  Ye et al. (AAAI 2023, §5) give the GP layer 3e-3 for runs of thousands of steps; over ~100 steps
  3e-3 reached R@1 0.33, 3e-2 and 1e-1 both 0.62.
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
        "pooler", description="bounded layers: pooler (uncertainty-baselines' BERT-SNGP), or all (Ye et al.)"
    )
    lengthscale: Annotated[float, Field(gt=0)] | None = Field(
        None, description="RBF length scale ℓ; None: √K, K the feature width (see the module docstring)"
    )
    head_lr: Annotated[float, Field(gt=0, le=1)] | None = Field(
        3e-2, description="learning rate of the output layer β (None: train.lr; Ye et al., AAAI 2023: 3e-3)"
    )
    mean_field: Annotated[float, Field(ge=0, description="mean-field factor λ (π/8)")] = round(math.pi / 8, 4)


class SNGPHead(GPHead):
    """g(h) = φ(LN(h))ᵀβ̂; each training forward adds its batch to the Laplace precision."""

    def __init__(self, dim: int, params: SNGPParams) -> None:
        lengthscale = params.lengthscale or math.sqrt(dim)
        features = RandomFeatures(dim, "rbf", params.features, lengthscale, outputscale=1.0)
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
        logits: torch.Tensor = self.beta(phi).squeeze(-1)
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
