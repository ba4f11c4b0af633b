"""`pg_gp`: PG-DRR, a GP output layer with Pólya-Gamma augmentation and Gibbs sampling
(Ye et al., AAAI 2023, §3.3–3.6).

GP layer: g ~ GP(0, k) on the encoder's [CLS] features h, k = RBF (output scale σ² = 8; Matérn or
linear as options). Departure: the paper fixes the length scale at 1; here h passes a
parameter-free LayerNorm first and ℓ = √K (K the feature width) unless given, for the reason
`sngp`'s docstring measures (on K unit-variance coordinates two inputs lie about √(2K) apart,
and with ℓ = 1 the kernel between any two is ≈ 0). ``normalize_input: false, lengthscale: 1``
is the paper's layer. Scaled to the training set with random Fourier features
(``methods.gp``): k(h, h') ≈ φ(h)ᵀφ(h'), so K = ΦΦᵀ on a mini-batch and g = φᵀβ, β ~ N(0, I).

Augmentation: with κ = y − ½ and w ~ PG(1, g), p(y | g, w) ∝ exp(κg − wg²/2) is Gaussian in g,
so the Gibbs conditionals are (eq. 9–11)
    w | g ~ PG(1, g),   g | y, w ~ N(Σκ, Σ),  Σ = (K⁻¹ + Ω)⁻¹,  Ω = diag(w).
Training (Algorithm 1): per mini-batch, N chains (30) of T steps (10) give w₁ … w_N, and the
encoder follows Fisher's identity (eq. 13) ∇θ log p(y | x) ≈ 1/N Σₙ ∇θ log N(κ/wₙ | 0, K_θ + Ωₙ⁻¹).
PG draws come from the `polyagamma` package.
Posterior: after every epoch (``refit``) one pass over the training batches, with the encoder as the
epoch left it and no dropout, adds each batch's chain-averaged w̄ and κ to P = I + Σᵢ w̄ᵢφᵢφᵢᵀ and
r = Σᵢ κᵢφᵢ, so β | data ~ N(P⁻¹r, P⁻¹), the weight-space form of eq. 14:
    μ* = φ*ᵀP⁻¹r = K*ᵀ(K + Ω⁻¹)⁻¹Ω⁻¹κ,   Σ* = φ*ᵀP⁻¹φ* = K** − K*ᵀ(K + Ω⁻¹)⁻¹K*.
Eq. 14's K is the trained kernel on every training input. Until issue 47 the training steps themselves
added their batches, as SNGP accumulates its precision (Liu et al. 2020), so P and r mixed the
features of every encoder the epoch passed through, with dropout; μ* is read from r, unlike SNGP's
trained mean, and the early-stopped members, whose encoder still moved in their best epoch, lost most:
refitting the committed gp run's members (best epoch kept) lifted ClariQ test R@1 from 0.607, 0.689,
0.574 to 0.689, 0.672, 0.656 and SemEval's from 0.185, 0.171, 0.137 to 0.204, 0.166, 0.175
(rankuq/records/2026-11-30-pg-gp-refit.json).
Predictive (eq. 15): ∫σ(g)N(g | μ*, Σ*)dg by 1-D Gauss–Hermite quadrature (``predictive``); ``sample``
gives S draws σ(g_s).
"""

import math
from collections.abc import Iterable
from typing import Annotated, Any, cast

import numpy as np
import torch
from polyagamma import random_polyagamma
from pydantic import Field, field_validator
from torch import nn

from rankuq.methods.base import REGISTRY, Batch
from rankuq.methods.gp import (
    GPHead,
    GPMethod,
    GPParams,
    KernelName,
    RandomFeatures,
    gauss_hermite_probability,
    gp_ranker,
)


class PGGPParams(GPParams):
    kernel: KernelName = "rbf"
    lengthscale: Annotated[float, Field(gt=0)] | None = Field(
        None, description="RBF length scale ℓ; None: √K on the normalised features (module docstring)"
    )
    normalize_input: bool = Field(True, description="a parameter-free LayerNorm on h before the kernel")
    outputscale: Annotated[float, Field(gt=0, description="kernel variance σ²")] = 8.0
    chains: Annotated[int, Field(ge=1, le=10_000, description="parallel Gibbs chains N")] = 30
    steps: Annotated[int, Field(ge=1, le=100_000, description="Gibbs steps T per chain")] = 10
    momentum: float | None = Field(None, description="unset: the posterior is refitted after every epoch")
    head_lr: float | None = Field(None, description="unset: the head has no weights to train")

    @field_validator("momentum")
    @classmethod
    def exact_sums(cls, momentum: float | None) -> float | None:
        """The posterior is refitted from every training batch after each epoch: a moving average of
        it (SNGP's eq. 5) would start from nothing at every refit."""
        if momentum is not None:
            raise ValueError(
                "pg_gp refits its posterior from every training batch after each epoch; leave momentum unset"
            )
        return momentum

    @field_validator("head_lr")
    @classmethod
    def nothing_to_train(cls, head_lr: float | None) -> float | None:
        """The head is fixed random features and the posterior: a rate of its own would train nothing."""
        if head_lr is not None:
            raise ValueError(
                "pg_gp's head has no weights to train (its mean is the Gibbs posterior); leave head_lr unset"
            )
        return head_lr


class PGHead(GPHead):
    """g(h) = φ(h)ᵀβ with β | data ~ N(P⁻¹r, P⁻¹), both statistics filled by the training loss."""

    shift: torch.Tensor  # buffer

    def __init__(self, dim: int, params: PGGPParams) -> None:
        lengthscale = params.lengthscale or math.sqrt(dim)
        features = RandomFeatures(dim, params.kernel, params.features, lengthscale, params.outputscale)
        normalise = nn.LayerNorm(dim, elementwise_affine=False) if params.normalize_input else nn.Identity()
        super().__init__(nn.Sequential(normalise, features), features.width, params.momentum)
        self.register_buffer("shift", torch.zeros(features.width))  # r = Σ κᵢφᵢ
        self._mean: tuple[torch.Tensor, torch.Tensor] | None = None  # (P's Cholesky factor, μ)

    @torch.no_grad()
    def observe_labels(self, phi: torch.Tensor, weights: torch.Tensor, kappa: torch.Tensor) -> None:
        """Add one batch to P (weights w̄) and to r (κ = y − ½)."""
        self.observe(phi, weights)
        self.accumulate(self.shift, kappa @ phi)

    def reset_posterior(self) -> None:
        super().reset_posterior()
        self.shift.zero_()

    def mean_weights(self, cholesky: torch.Tensor) -> torch.Tensor:
        """μ = P⁻¹r, solved once per Cholesky factor (a new factor whenever D, and with it r, changes)."""
        if self._mean is None or self._mean[0] is not cholesky:
            self._mean = (cholesky, torch.cholesky_solve(self.shift.double()[:, None], cholesky)[:, 0])
        return self._mean[1]


def polya_gamma(c: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    """w ~ PG(1, c), elementwise."""
    return torch.from_numpy(random_polyagamma(1, c.cpu().numpy(), random_state=rng)).to(c)


def _whitening(kernel: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """√w [N, M] and the Cholesky factor of B = I + Ω^½ K Ω^½ [N, M, M] (eigenvalues ≥ 1)."""
    root = w.sqrt()
    eye = torch.eye(kernel.shape[-1], dtype=kernel.dtype, device=kernel.device)
    return root, torch.linalg.cholesky(eye + root[:, :, None] * kernel * root[:, None, :])


def conditional_draw(
    phi: torch.Tensor, kappa: torch.Tensor, w: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    """g ~ N(Σκ, Σ), Σ = (K⁻¹ + Ω)⁻¹, per chain, by perturbing a prior draw (Matheron's rule):
    g = f + KΩ^½B⁻¹Ω^½(Ω⁻¹κ − f − ε),  f = Φz ~ N(0, K),  ε ~ N(0, Ω⁻¹)."""
    kernel = phi @ phi.T
    root, cholesky = _whitening(kernel, w)
    prior = torch.randn(len(w), phi.shape[1], generator=generator, dtype=phi.dtype) @ phi.T
    noise = torch.randn(w.shape, generator=generator, dtype=phi.dtype) / root
    residual = root * (kappa / w - prior - noise)
    solved = torch.cholesky_solve(residual[..., None], cholesky)[..., 0]
    return prior + (root * solved) @ kernel


def gibbs(phi: torch.Tensor, kappa: torch.Tensor, chains: int, steps: int, seed: int) -> torch.Tensor:
    """Algorithm 1, lines 4–9: g⁰ ~ N(0, K); for t = 1..T, w^t ~ PG(1, g^{t−1}), g^t ~ p(g | y, w^t).
    Returns w^T of every chain [N, M]."""
    rng, generator = np.random.default_rng(seed), torch.Generator().manual_seed(seed)
    g = torch.randn(chains, phi.shape[1], generator=generator, dtype=phi.dtype) @ phi.T
    for _ in range(steps - 1):
        g = conditional_draw(phi, kappa, polya_gamma(g, rng), generator)
    return polya_gamma(g, rng)


def augmented_nll(phi: torch.Tensor, kappa: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """−1/N Σₙ log N(κ/wₙ | 0, ΦΦᵀ + Ωₙ⁻¹) per pair, up to terms free of Φ:
    with B = I + Ω^½KΩ^½ = LLᵀ and u = κ/√w, −log N = ½‖L⁻¹u‖² + Σ log diag L + const."""
    root, cholesky = _whitening(phi @ phi.T, w)
    white = torch.linalg.solve_triangular(cholesky, (kappa / root)[..., None], upper=False)[..., 0]
    log_det = cholesky.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return cast(torch.Tensor, (0.5 * white.square().sum(-1) + log_det).mean() / len(kappa))


@REGISTRY.register
class PGGP(GPMethod):
    name = "pg_gp"
    description = "PG-DRR: RBF GP head, Pólya-Gamma augmentation, Gibbs (N=30, T=10) [Ye et al., AAAI 2023]"
    Params = PGGPParams
    params: PGGPParams  # validated as Params by Method.__init__

    def build_head(self, dim: int) -> PGHead:
        return PGHead(dim, self.params)

    @staticmethod
    def batch_features(
        model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor
    ) -> tuple[PGHead, torch.Tensor, torch.Tensor]:
        """The head, a training batch's random features φ and its κ = y − ½, in float64."""
        ranker, head = gp_ranker(model)
        assert isinstance(head, PGHead)
        return head, head.features(ranker.encoder(**inputs)).double(), labels.double() - 0.5

    def loss(self, model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        _, phi, kappa = self.batch_features(model, inputs, labels)
        seed = int(torch.randint(2**31, ()))  # from the global seed that training sets
        w = gibbs(phi.detach(), kappa, self.params.chains, self.params.steps, seed)
        return augmented_nll(phi, kappa, w).float()

    refits = True

    def training_identity(self) -> dict[str, Any]:
        return {**super().training_identity(), "posterior": "refit"}  # members that accumulated it retrain

    def refit(self, model: nn.Module, batches: Iterable[Batch], seed: int) -> None:
        """P and r anew from every training batch under the encoder as it is (module docstring)."""
        gp_ranker(model)[1].reset_posterior()
        rng = np.random.default_rng(seed)
        for inputs, labels in batches:
            head, phi, kappa = self.batch_features(model, inputs, labels)
            w = gibbs(phi, kappa, self.params.chains, self.params.steps, int(rng.integers(2**31)))
            head.observe_labels(phi, w.mean(dim=0), kappa)

    def probability(self, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
        return gauss_hermite_probability(mean, var)
