"""What the GP heads share: spectral-norm bounds by power iteration, random features that approximate their
kernels, and the probit approximations of E[σ(g)]."""

import math

import pytest
import torch
from torch import nn

from rankuq.methods.gp import (
    RandomFeatures,
    SpectralBound,
    bound_spectral_norm,
    gauss_hermite_probability,
    mean_field_probability,
)


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
