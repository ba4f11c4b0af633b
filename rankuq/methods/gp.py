"""Gaussian-process output layers shared by `sngp`, `gpf` and `pg_gp` (Ye et al., AAAI 2023;
Ye et al., ICASSP 2023).

A GP g ~ GP(0, k) on the encoder's features h is scaled to the whole training set with random
Fourier features (Rahimi & Recht 2007): g(h) = φ(h)ᵀβ, β ~ N(0, I), φ(h)ᵀφ(h') ≈ k(h, h'). The
posterior over β is a Gaussian N(μ, P⁻¹) whose precision
    P = I + D,   D = Σᵢ wᵢ φᵢφᵢᵀ
is accumulated mini-batch by mini-batch: wᵢ = p̂ᵢ(1 − p̂ᵢ) for SNGP's Laplace approximation, the
Pólya-Gamma variables for PG-GP. With ``momentum`` None, D sums every batch since the last
``reset_posterior`` (Ye et al., ICASSP 2023, eq. 4, exact over one epoch); with α it is the moving average
D ← αD + (1 − α) Σ_batch wᵢφᵢφᵢᵀ (eq. 5). A pair's logit then has the predictive
N(m, v), m = φᵀμ, v = φᵀP⁻¹φ.

Closed-form heads give both (mean, var, probability) through ``GPMethod.predictive`` and S draws
σ(φᵀβ_s), β_s ~ N(μ, P⁻¹), through ``sample``; the draws reuse one fixed set of S posterior
functions for every batch, so they are coherent across the candidates of a list. Scoring
(``draw``) keeps the draws as the table's samples and the paper's predictive probability as its
prob_mean.
"""

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal, cast

import numpy as np
import torch
from pydantic import Field
from torch import nn
from torch.nn import functional
from torch.nn.utils import parametrize

from rankuq.methods.base import half_weights
from rankuq.methods.ranker import HeadMethod, HeadParams, Ranker

KernelName = Literal["rbf", "matern12", "matern32", "matern52", "linear"]
MATERN_NU = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}
HERMITE_NODES = 32
DRAW_SEED = 0  # the posterior functions drawn by `sample`: the same for every batch and run


class RandomFeatures(nn.Module):
    """φ with φ(h)ᵀφ(h') ≈ k(h, h') for k = σ² κ(‖h − h'‖ / ℓ) (σ² the output scale).

    Stationary kernels use L random Fourier features φ(h) = σ √(2/L) cos(Ωh / ℓ + b), b ~ U(0, 2π),
    the rows of Ω drawn from the kernel's spectral density: N(0, I) for RBF, a Student-t with 2ν
    degrees of freedom (z / √u, u ~ Gamma(ν, ν)) for Matérn-ν. The linear kernel k = σ² hᵀh' is
    exact, φ(h) = σh (L = dim). The frequencies are fixed buffers, drawn from the global seed.
    """

    frequencies: torch.Tensor  # buffers of the stationary kernels
    phase: torch.Tensor

    def __init__(self, dim: int, kernel: KernelName, count: int, lengthscale: float, outputscale: float):
        super().__init__()
        self.kernel = kernel
        self.scale = math.sqrt(outputscale)
        self.width = dim if kernel == "linear" else count
        if kernel != "linear":
            frequencies = torch.randn(count, dim)
            if kernel in MATERN_NU:
                nu = MATERN_NU[kernel]
                frequencies /= torch.distributions.Gamma(nu, nu).sample((count, 1)).sqrt()
            self.register_buffer("frequencies", frequencies / lengthscale)
            self.register_buffer("phase", 2 * math.pi * torch.rand(count))
            self.scale *= math.sqrt(2 / count)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if self.kernel == "linear":
            return self.scale * h
        return self.scale * torch.cos(h @ self.frequencies.T + self.phase)


class SpectralBound(nn.Module):
    """Parametrisation W ↦ W · min(1, c / σ̂(W)) (Ye et al., ICASSP 2023, eq. 1; Miyato et al., 2018).

    σ̂ is W's largest singular value (W as a matrix [out, in·…]) by power iteration,
        v ← Wᵀu / ‖Wᵀu‖,  u ← Wv / ‖Wv‖,  σ̂ = uᵀWv,
    ``iterations`` steps per training forward; u and v are buffers, warmed up on the initial W.
    """

    u: torch.Tensor
    v: torch.Tensor

    def __init__(self, weight: torch.Tensor, bound: float, iterations: int = 1, warmup: int = 20) -> None:
        super().__init__()
        self.bound, self.iterations = bound, iterations
        rows, columns = weight.flatten(1).shape
        self.register_buffer("u", functional.normalize(torch.randn(rows), dim=0))
        self.register_buffer("v", functional.normalize(torch.randn(columns), dim=0))
        self._power_iteration(weight.detach().flatten(1), warmup)

    @torch.no_grad()
    def _power_iteration(self, matrix: torch.Tensor, steps: int) -> None:
        for _ in range(steps):
            self.v.copy_(functional.normalize(matrix.T @ self.u, dim=0))
            self.u.copy_(functional.normalize(matrix @ self.v, dim=0))

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        matrix = weight.flatten(1)
        if self.training:
            self._power_iteration(matrix.detach(), self.iterations)
        sigma = self.u.clone() @ matrix @ self.v.clone()
        return weight * torch.clamp(self.bound / sigma, max=1.0)


def bound_spectral_norm(layer: nn.Module, bound: float) -> None:
    """Bound the spectral norm of ``layer.weight`` by ``bound`` from now on."""
    weight = layer.weight
    assert isinstance(weight, torch.Tensor)  # a parameter; nn.Module types it Tensor | Module
    parametrize.register_parametrization(layer, "weight", SpectralBound(weight, bound))


def fold_spectral_bounds(model: nn.Module) -> nn.Module:
    """``model`` with every ``SpectralBound`` folded into its layer's weight (in place): the bounded
    weight W·min(1, c/σ̂) as a plain weight. A scorer's model then runs as `bert`'s does; the
    parametrisation recomputed σ̂ = uᵀWv and W·min(1, c/σ̂) in every forward, seven kernels for each
    of MiniLM-L6's 37 bounded layers, most of SNGP's 2.2-2.7x bert's cost on an H100 at 64 rows per
    pass. The same numbers: the fold runs the forward's own computation once (no power iteration,
    ``eval``). Only for scoring: a folded model trains without its bound."""
    for module in list(model.modules()):
        if not parametrize.is_parametrized(module):
            continue
        parametrizations = module.parametrizations
        assert isinstance(parametrizations, nn.ModuleDict)  # parametrize's; nn.Module types it loosely
        for name, bounds in list(parametrizations.items()):
            if all(isinstance(bound, SpectralBound) for bound in bounds.children()):
                bounds.eval()
                parametrize.remove_parametrizations(module, name, leave_parametrized=True)
    return model


class GPHead(nn.Module, ABC):
    """g(h) = φ(h)ᵀβ with β ~ N(μ, P⁻¹), P = I + D (module docstring); ``mean_weights`` gives μ."""

    precision: torch.Tensor  # buffer

    def __init__(self, features: nn.Module, width: int, momentum: float | None) -> None:
        super().__init__()
        self.features = features
        self.momentum = momentum
        self.register_buffer("precision", torch.zeros(width, width))  # D, the data part of P
        self._cholesky: torch.Tensor | None = None  # of P, cached while D stays as it is
        self._noise: dict[tuple[int, torch.device, torch.dtype], torch.Tensor] = {}  # z of ``noise``

    def accumulate(self, buffer: torch.Tensor, batch: torch.Tensor) -> None:
        """buffer ← buffer + batch (momentum None) or α·buffer + (1 − α)·batch."""
        batch = batch.to(buffer.dtype)
        if self.momentum is None:
            buffer.add_(batch)
        else:
            buffer.mul_(self.momentum).add_(batch, alpha=1 - self.momentum)

    @torch.no_grad()
    def observe(self, phi: torch.Tensor, weights: torch.Tensor) -> None:
        """D += Σᵢ wᵢ φᵢφᵢᵀ for one mini-batch of features φ [n, L] and weights w [n]."""
        self.accumulate(self.precision, (phi * weights[:, None]).T @ phi)
        self._cholesky = None

    def reset_posterior(self) -> None:
        """Forget the accumulated data (at the start of an epoch, so D covers the last one)."""
        self.precision.zero_()
        self._cholesky = None

    def cholesky(self) -> torch.Tensor:
        """Lower Cholesky factor of P = I + D (float64), computed once per state of D."""
        if self._cholesky is None:
            eye = torch.eye(len(self.precision), dtype=torch.float64, device=self.precision.device)
            self._cholesky = torch.linalg.cholesky(eye + self.precision.double())
        return self._cholesky

    def _load_from_state_dict(self, *args: Any, **kwargs: Any) -> None:
        self._cholesky = None
        super()._load_from_state_dict(*args, **kwargs)

    def _apply(self, fn: Any, recurse: bool = True) -> "GPHead":
        self._cholesky = None  # .to(), .double(), …
        # torch's Module._apply is unannotated; untyped_calls_exclude misses calls through super()
        return cast("GPHead", super()._apply(fn, recurse))  # type: ignore[no-untyped-call]

    @abstractmethod
    def mean_weights(self, cholesky: torch.Tensor) -> torch.Tensor:
        """The posterior mean μ of β [L] (float64), given P's Cholesky factor."""

    def _posterior(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Predictive means m [n] and whitened features A = C⁻¹Φᵀ [L, n] (P = CCᵀ), in float64."""
        phi = self.features(h).double()
        cholesky = self.cholesky()
        whitened = torch.linalg.solve_triangular(cholesky, phi.T, upper=False)
        return phi @ self.mean_weights(cholesky), whitened

    def predictive(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean m = φᵀμ and variance v = φᵀP⁻¹φ = ‖C⁻¹φ‖² of each logit."""
        mean, whitened = self._posterior(h)
        return mean.to(h.dtype), whitened.square().sum(dim=0).to(h.dtype)

    def predictive_draws(
        self, h: torch.Tensor, count: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``predictive``'s (m, v), kept in float64 (a bfloat16 prob_mean would tie candidates), and
        ``draws``' logits [n, S] in h's dtype, from one posterior solve."""
        mean, whitened = self._posterior(h)
        logits = mean[:, None] + whitened.T @ self.noise(count, whitened)
        return mean, whitened.square().sum(dim=0), logits.to(h.dtype)

    def noise(self, count: int, like: torch.Tensor) -> torch.Tensor:
        """The S posterior functions' z [L, S], z ~ N(0, I) from ``DRAW_SEED``: the same for every
        batch, so drawn once per device and dtype (it was drawn anew in every pass)."""
        key = (count, like.device, like.dtype)
        if key not in self._noise:
            generator = torch.Generator(device=like.device).manual_seed(DRAW_SEED)
            self._noise[key] = torch.randn(
                len(like), count, generator=generator, dtype=like.dtype, device=like.device
            )
        return self._noise[key]

    def draws(self, h: torch.Tensor, count: int) -> torch.Tensor:
        """Logits [n, S] of S posterior functions: φᵀβ_s = φᵀμ + (C⁻¹φ)ᵀz_s, z_s ~ N(0, I)."""
        return self.predictive_draws(h, count)[2]

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.predictive(h)[0]


def mean_field_probability(mean: torch.Tensor, var: torch.Tensor, factor: float) -> torch.Tensor:
    """E[σ(g)], g ~ N(m, v), by the mean-field approximation σ(m / √(1 + λv)) (Lu et al. 2020)."""
    return torch.sigmoid(mean / torch.sqrt(1 + factor * var))


def gauss_hermite_probability(mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """E[σ(g)], g ~ N(m, v), by Gauss–Hermite quadrature: π^{-½} Σ_k ω_k σ(m + √(2v) x_k)."""
    nodes, weights = hermite(mean.device, mean.dtype)
    logits = mean[:, None] + torch.sqrt(2 * var)[:, None] * nodes
    return torch.sigmoid(logits) @ weights / math.sqrt(math.pi)


@functools.cache
def hermite(device: torch.device, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Gauss–Hermite nodes and weights on ``device``, copied there once (a host copy per pass waits)."""
    nodes, weights = np.polynomial.hermite.hermgauss(HERMITE_NODES)
    return torch.from_numpy(nodes).to(device, dtype), torch.from_numpy(weights).to(device, dtype)


def features(ranker: Ranker, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """The encoder's features of ``inputs`` for the head, in fp32 where the encoder holds bfloat16
    weights (under autocast they stay as autocast leaves them: the same numbers as before)."""
    h: torch.Tensor = ranker.encoder(**inputs)
    return h if torch.is_autocast_enabled(h.device.type) else h.float()


def gp_ranker(model: nn.Module) -> tuple[Ranker, GPHead]:
    """A GP method's model (the method interface passes any module) and its head, as their types."""
    assert isinstance(model, Ranker) and isinstance(model.head, GPHead)
    return model, model.head


class GPParams(HeadParams):
    features: Annotated[int, Field(ge=1, le=65536, description="random Fourier features L")] = 1024
    momentum: Annotated[float, Field(ge=0, lt=1)] | None = Field(
        None, description="None: exact precision over the epoch (eq. 4); α: moving average (eq. 5)"
    )
    S: Annotated[int, Field(gt=0, le=100_000, description="posterior draws per pair")] = 100


class GPMethod(HeadMethod):
    """A method with a ``GPHead``: closed-form (mean, var) per logit, plus S coherent draws."""

    inference_only: ClassVar[frozenset[str]] = frozenset({"S"})
    params: GPParams  # validated as Params by Method.__init__

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.draw(models, inputs)[0]

    def draw(
        self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """S draws σ(g_s) and, as prob_mean, the paper's predictive E[σ(g)] (``probability``: the
        mean-field approximation for SNGP/GPF, Ye et al., ICASSP 2023; Gauss–Hermite for PG-GP,
        Ye et al., AAAI 2023),
        not the mean of the S draws; one encoder pass for both."""
        (model,) = models
        model.eval()
        ranker, head = gp_ranker(model)
        mean, var, logits = head.predictive_draws(features(ranker, inputs), self.params.S)
        with torch.autocast(mean.device.type, enabled=False):  # quadrature's matmul in float64
            return torch.sigmoid(logits), self.probability(mean, var)

    def inference_model(self, member: nn.Module, weights: torch.dtype) -> nn.Module:
        """The encoder's spectral bounds folded in, and only the encoder in ``weights``: the head's
        random features (cos of phases up to 2π) and posterior keep fp32 and float64."""
        ranker, _ = gp_ranker(fold_spectral_bounds(member))
        half_weights(ranker.encoder, weights)
        return ranker

    def on_epoch_start(self, model: nn.Module) -> None:
        """With exact sums (momentum None) the precision restarts each epoch, so it ends up covering
        the last epoch's features once (Ye et al., ICASSP 2023, eq. 4)."""
        if self.params.momentum is None:
            gp_ranker(model)[1].reset_posterior()

    def predictive(
        self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mean, var) of each pair's logit and its predictive relevance probability."""
        (model,) = models
        model.eval()
        ranker, head = gp_ranker(model)
        mean, var = head.predictive(features(ranker, inputs))
        return mean, var, self.probability(mean, var)

    @abstractmethod
    def probability(self, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
        """P(relevant) = E[σ(g)] under the logit's predictive N(mean, var)."""
