"""What the GP heads share: spectral-norm bounds by power iteration, random features that approximate their
kernels, and the probit approximations of E[σ(g)]."""

import math

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrize

from rankuq.methods.gp import (
    DRAW_SEED,
    RandomFeatures,
    SpectralBound,
    bound_spectral_norm,
    gauss_hermite_probability,
    mean_field_probability,
)
from rankuq.methods.sngp import SNGPHead, SNGPParams


def spectral_norm(weight: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(weight.detach().flatten(1), ord=2))


def test_power_iteration_bounds_the_largest_singular_value():
    torch.manual_seed(0)
    left, _ = torch.linalg.qr(torch.randn(12, 12))
    right, _ = torch.linalg.qr(torch.randn(8, 8))
    layer = nn.Linear(8, 12)
    with torch.no_grad():
        layer.weight.copy_(left[:, :8] @ torch.diag(torch.linspace(5.0, 0.5, 8)) @ right.T)
    bound_spectral_norm(layer, bound=0.95)
    for _ in range(5):  # training forwards run one power-iteration step each
        layer(torch.randn(2, 8))
    assert spectral_norm(layer.weight) <= 0.95 + 1e-4
    assert spectral_norm(layer.weight) == pytest.approx(0.95, rel=1e-3)


def test_a_weight_already_within_the_bound_is_unchanged():
    weight = torch.eye(4) * 0.5
    bound = SpectralBound(weight, bound=0.95)
    assert torch.allclose(bound(weight), weight)


def test_convolution_weights_are_bounded_as_matrices():
    conv = nn.Conv1d(6, 5, 3)
    with torch.no_grad():
        conv.weight.mul_(50)
    bound_spectral_norm(conv, bound=1.0)
    conv(torch.randn(1, 6, 9))
    assert spectral_norm(conv.weight) <= 1.0 + 1e-3


def test_random_fourier_features_approximate_the_rbf_kernel():
    torch.manual_seed(0)
    features = RandomFeatures(3, "rbf", count=20000, lengthscale=2.0, outputscale=1.0)
    h = torch.randn(5, 3)
    exact = torch.exp(-(torch.cdist(h, h) ** 2) / (2 * 2.0**2))
    assert torch.allclose(features(h) @ features(h).T, exact, atol=0.03)


def test_mean_field_shrinks_towards_one_half():
    mean, var = torch.tensor([2.0, 2.0]), torch.tensor([0.0, 10.0])
    probability = mean_field_probability(mean, var, math.pi / 8)
    assert probability[0] == pytest.approx(torch.sigmoid(torch.tensor(2.0)).item())
    assert 0.5 < probability[1] < probability[0]


def test_gauss_hermite_matches_monte_carlo():
    mean = torch.tensor([0.0, 1.5, -3.0], dtype=torch.float64)
    var = torch.tensor([4.0, 0.5, 0.0], dtype=torch.float64)
    exact = torch.sigmoid(mean + var.sqrt() * torch.randn(400_000, 1, dtype=torch.float64)).mean(dim=0)
    assert torch.allclose(gauss_hermite_probability(mean, var), exact, atol=2e-3)


@pytest.mark.parametrize(
    ("kernel", "exact"),
    [
        ("matern12", lambda r: torch.exp(-r)),
        ("matern52", lambda r: (1 + math.sqrt(5) * r + 5 * r**2 / 3) * torch.exp(-math.sqrt(5) * r)),
    ],
)
def test_matern_random_features_approximate_the_kernel(kernel, exact):
    torch.manual_seed(0)
    features = RandomFeatures(2, kernel, count=40_000, lengthscale=1.0, outputscale=8.0)
    h = torch.randn(4, 2)
    approx = features(h) @ features(h).T
    assert torch.allclose(approx, 8.0 * exact(torch.cdist(h, h)), atol=0.25)


def test_linear_kernel_is_exact():
    features = RandomFeatures(3, "linear", count=7, lengthscale=1.0, outputscale=8.0)
    h = torch.randn(4, 3)
    assert features.width == 3
    assert torch.allclose(features(h) @ features(h).T, 8.0 * h @ h.T, atol=1e-5)


def test_a_scorer_s_model_has_its_spectral_bounds_folded_with_the_same_draws(build, inputs, labels):
    """Folding the bounds into plain weights (what a scorer's model gets, ``inference_model``) runs no
    σ̂ = uᵀWv per forward and changes no number: the draws and prob_mean are bitwise the same."""
    method, _, model = build("sngp", {"S": 5, "features": 32})
    model.train()
    method.loss(model, inputs, labels).backward()  # a power-iteration step and a posterior
    with torch.inference_mode():
        before = method.draw([model], inputs)
    folded = method.inference_model(model, torch.float32)
    assert not any(parametrize.is_parametrized(module) for module in folded.modules())
    with torch.inference_mode():
        after = method.draw([folded], inputs)
    assert torch.equal(before[0], after[0]) and torch.equal(before[1], after[1])


def test_the_posterior_functions_noise_is_drawn_once_as_the_draw_seed_draws_it():
    head = SNGPHead(4, SNGPParams(features=16))
    like = torch.zeros(16, 2, dtype=torch.float64)
    noise = head.noise(7, like)
    assert head.noise(7, like) is noise  # cached, not drawn in every pass
    generator = torch.Generator().manual_seed(DRAW_SEED)
    assert torch.equal(noise, torch.randn(16, 7, generator=generator, dtype=torch.float64))


def test_pg_gp_s_posterior_mean_is_solved_once_per_state_of_the_posterior(build, inputs, labels):
    method, _, model = build("pg_gp", {"S": 3, "features": 16, "chains": 2, "steps": 2})
    with torch.no_grad():
        method.refit(model, [(inputs, labels)], seed=0)
    head = model.head
    mean = head.mean_weights(head.cholesky())
    assert head.mean_weights(head.cholesky()) is mean
    with torch.no_grad():
        method.refit(model, [(inputs, labels)] * 2, seed=0)  # another posterior: P and r change
    assert not torch.equal(head.mean_weights(head.cholesky()), mean)


@pytest.mark.parametrize("name", ["sngp", "pg_gp"])
def test_bf16_weights_keep_the_gp_head_in_fp32(build, inputs, name):
    method, _, model = build(name, {"S": 3, "features": 16})
    with torch.inference_mode():
        reference = method.draw([model], inputs)[1]
    half = method.inference_model(model, torch.bfloat16)
    assert {p.dtype for p in half.encoder.parameters()} == {torch.bfloat16}
    assert {b.dtype for b in half.head.buffers()} <= {torch.float32}
    with torch.inference_mode():
        draws, mean = method.draw([half], inputs)
    assert draws.dtype == torch.float32 and mean.dtype == torch.float64
    assert (mean - reference).abs().max() < 0.05  # bf16's rounding of the features, no more
