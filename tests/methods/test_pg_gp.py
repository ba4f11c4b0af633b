import math

import numpy as np
import pytest
import torch

from rankuq import methods
from rankuq.errors import RankuqError
from rankuq.methods.pg_gp import augmented_nll, conditional_draw, gibbs, polya_gamma


def test_polya_gamma_mean_matches_the_closed_form():
    c = torch.tensor([0.0, 0.5, 2.0, 10.0], dtype=torch.float64)
    draws = polya_gamma(c.repeat(100_000, 1), np.random.default_rng(0))
    expected = torch.where(c == 0, 0.25, torch.tanh(c / 2) / (2 * c))  # E[PG(1, c)], 1/4 at c = 0
    assert torch.allclose(draws.mean(dim=0), expected, rtol=0.01)


def small_gp(m: int = 3, width: int = 8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Features Φ [m, width] (K = ΦΦᵀ full rank), κ and fixed PG weights w."""
    generator = torch.Generator().manual_seed(1)
    phi = torch.randn(m, width, generator=generator, dtype=torch.float64) / math.sqrt(width)
    kappa = torch.tensor([0.5, -0.5, 0.5], dtype=torch.float64)[:m]
    return phi, kappa, torch.tensor([0.2, 0.1, 0.25], dtype=torch.float64)[:m]


def test_conditional_draws_have_the_gibbs_moments():
    phi, kappa, w = small_gp()
    chains = 40_000
    draws = conditional_draw(phi, kappa, w.repeat(chains, 1), torch.Generator().manual_seed(0))
    covariance = torch.linalg.inv(torch.linalg.inv(phi @ phi.T) + torch.diag(w))  # Σ = (K⁻¹ + Ω)⁻¹
    assert torch.allclose(draws.mean(dim=0), covariance @ kappa, atol=0.02)
    assert torch.allclose(torch.cov(draws.T), covariance, atol=0.02)


def test_gibbs_returns_the_last_weights_of_every_chain():
    phi, kappa, _ = small_gp()
    w = gibbs(phi, kappa, chains=5, steps=3, seed=0)
    assert w.shape == (5, 3)
    assert (w > 0).all()
    assert torch.equal(w, gibbs(phi, kappa, chains=5, steps=3, seed=0))


def test_augmented_nll_is_the_gaussian_marginal_up_to_a_constant():
    phi, kappa, w = small_gp()
    w = torch.stack([w, w.flip(0)])
    phi = phi.clone().requires_grad_()
    ours = augmented_nll(phi, kappa, w)
    zero = torch.zeros(3, dtype=phi.dtype)
    marginals = [torch.distributions.MultivariateNormal(zero, phi @ phi.T + torch.diag(1 / wn)) for wn in w]
    direct = -torch.stack([m.log_prob(kappa / wn) for m, wn in zip(marginals, w, strict=True)]).mean() / 3
    constant = (0.5 * w.log().sum(-1).mean() - 1.5 * math.log(2 * math.pi)) / 3
    assert ours.item() == pytest.approx((direct + constant).item())
    (gradient,) = torch.autograd.grad(ours, phi, retain_graph=True)
    (expected,) = torch.autograd.grad(direct, phi)
    assert torch.allclose(gradient, expected)  # Fisher's identity: same gradient


def test_weight_space_posterior_is_the_function_space_predictive(build):
    """μ* = K*ᵀ(K + Ω⁻¹)⁻¹Ω⁻¹κ and Σ* = K** − K*ᵀ(K + Ω⁻¹)⁻¹K* (Ye et al., AAAI 2023, eq. 14), K = ΦΦᵀ."""
    _, _, model = build("pg_gp", {"features": 16})
    head = model.head
    train, test = torch.randn(5, 32), torch.randn(3, 32)
    kappa, w = torch.tensor([0.5, -0.5, 0.5, 0.5, -0.5]), torch.rand(5) + 0.05
    head.observe_labels(head.features(train), w, kappa)
    mean, var = head.predictive(test)
    phi, phi_star = head.features(train).double(), head.features(test).double()
    gram = torch.linalg.inv(phi @ phi.T + torch.diag(1 / w.double()))
    cross = phi @ phi_star.T
    assert torch.allclose(mean.double(), cross.T @ gram @ (kappa.double() / w.double()), atol=1e-5)
    expected_var = (phi_star * phi_star).sum(1) - (cross * (gram @ cross)).sum(0)
    assert torch.allclose(var.double(), expected_var, atol=1e-5)


def test_sample_and_predictive_shapes(build, inputs, labels):
    method, _params, model = build("pg_gp", {"features": 32, "chains": 4, "steps": 2, "S": 6})
    with torch.no_grad():
        method.refit(model, [(inputs, labels)], seed=0)  # fills the posterior statistics
    with torch.inference_mode():
        draws = method.sample([model], inputs)
        _, var, probability = method.predictive([model], inputs)
    assert draws.shape == (4, 6)
    assert (draws.var(dim=1) > 0).all()
    assert (var > 0).all() and ((probability > 0) & (probability < 1)).all()


def test_loss_decreases(train_steps):
    losses = train_steps("pg_gp", {"features": 64, "chains": 8, "steps": 3}, steps=20, lr=1e-2)
    assert sum(losses[-5:]) < sum(losses[:5])


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (
            {"kernel": "cosine"},
            r"methods\.pg_gp\.kernel: Input should be 'rbf', 'matern12', 'matern32', 'matern52' or 'linear'",
        ),
        ({"chains": 0}, r"methods\.pg_gp\.chains: Input should be greater than or equal to 1"),
        ({"steps": 0}, r"methods\.pg_gp\.steps: Input should be greater than or equal to 1"),
        ({"outputscale": -8}, r"methods\.pg_gp\.outputscale: Input should be greater than 0"),
        ({"momentum": 0.9}, r"methods\.pg_gp\.momentum: .*refits its posterior .* leave momentum unset"),
        ({"head_lr": 1e-3}, r"methods\.pg_gp\.head_lr: .*no weights to train .* leave head_lr unset"),
    ],
)
def test_bad_parameters_are_one_clear_error(raw, match):
    with pytest.raises(RankuqError, match=match):
        methods.get("pg_gp").parse(raw, "grid.yaml: methods.pg_gp")


def test_the_posterior_is_refitted_from_every_batch_under_the_encoder_as_it_is(build, inputs, labels):
    """After an epoch P and r hold the training batches once, as the encoder now maps them (eq. 14's
    K is the trained kernel): what the training steps saw before is forgotten, r = Σ κᵢφᵢ."""
    method, _, model = build("pg_gp", {"features": 32, "chains": 4, "steps": 2})
    model.train()
    method.loss(model, inputs, labels)  # a training step observes nothing
    assert not model.head.precision.any() and not model.head.shift.any()
    halves = [
        ({k: t[:2] for k, t in inputs.items()}, labels[:2]),
        ({k: t[2:] for k, t in inputs.items()}, labels[2:]),
    ]
    model.eval()
    with torch.no_grad():
        method.refit(model, halves, seed=5)
        phi = model.head.features(model.encoder(**inputs)).double()
    kappa = labels.double() - 0.5
    # r is a float32 buffer: equal to float32's precision
    torch.testing.assert_close(model.head.shift.double(), kappa @ phi, rtol=1e-5, atol=1e-5)
    precision = model.head.precision.clone()
    assert torch.linalg.eigvalsh(precision.double()).min() > -1e-6 and precision.trace() > 0
    with torch.no_grad():
        method.refit(model, halves, seed=5)  # the same seed: the same posterior, not added to the last
    assert torch.equal(model.head.precision, precision)
