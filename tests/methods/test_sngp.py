import math

import pytest
import torch
from torch import nn
from torch.nn.utils import parametrize

from rankuq import methods
from rankuq.errors import RankuqError


def spectral_norm(weight: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(weight.detach().flatten(1), ord=2))


def test_sngp_bounds_the_encoder_feature_layers(build, inputs):
    _, _, model = build("sngp", {"c": 0.1})
    pooler = model.encoder.feature_layers()[0]
    assert spectral_norm(pooler.parametrizations.weight.original) > 0.1  # the bound binds
    model.train()
    for _ in range(10):
        model(**inputs)
    # Up to the power-iteration estimate: a random matrix's top singular values are close.
    assert spectral_norm(pooler.weight) <= 0.1 * 1.01


def test_spectral_norm_all_bounds_every_layer_of_the_residual_blocks(build):
    """Paper 004's wording: every residual layer's weight bounded by c (``all``); the default
    ``pooler`` bounds the pooler alone. The scope is part of what is trained, so the two are cached apart."""
    method, params, model = build("sngp", {"spectral_norm": "all"})
    linears = [m for m in model.encoder.bert.modules() if isinstance(m, nn.Linear)]
    assert params.spectral_norm == "all" and len(linears) == 13  # 2 blocks × 6, and the pooler
    assert all(parametrize.is_parametrized(m, "weight") for m in linears)
    pooler_method, _, pooler_only = build("sngp", {})
    bounded = [m for m in pooler_only.encoder.bert.modules() if parametrize.is_parametrized(m, "weight")]
    assert bounded == [pooler_only.encoder.bert.pooler.dense]
    assert method.training_identity() != pooler_method.training_identity()
    with pytest.raises(RankuqError, match=r"methods\.sngp\.spectral_norm: Input should be 'pooler' or 'all'"):
        method.parse({"spectral_norm": "none"}, "grid.yaml: methods.sngp")


def test_precision_is_the_sum_of_p_one_minus_p_outer_products(build, inputs):
    _, _, model = build("sngp", {"features": 32})
    model.train()
    model.encoder.eval()  # fixed features, so the head's input can be recomputed
    features = model.encoder(**inputs).detach()
    p = torch.sigmoid(model.head(features).detach())  # one training forward of the head
    phi = model.head.features(features)
    expected = (phi * (p * (1 - p))[:, None]).T @ phi
    assert torch.allclose(model.head.precision, expected, atol=1e-6)
    model.head(features)  # momentum None: exact sums
    assert torch.allclose(model.head.precision, 2 * expected, atol=1e-6)
    model.head.reset_posterior()
    assert model.head.precision.abs().sum() == 0


@pytest.mark.parametrize(("momentum", "kept"), [(None, False), (0.99, True)])
def test_epoch_start_restarts_exact_sums_only(build, inputs, momentum, kept):
    method, _params, model = build("sngp", {"features": 16, "momentum": momentum})
    model.train()
    model(**inputs)
    method.on_epoch_start(model)
    assert bool(model.head.precision.abs().sum() > 0) == kept


def test_inference_leaves_the_posterior_alone(build, inputs):
    method, _params, model = build("sngp", {"features": 32})
    model.train()
    model(**inputs)
    before = model.head.precision.clone()
    with torch.inference_mode():
        method.sample([model], inputs)
    assert torch.equal(model.head.precision, before)


def test_momentum_is_a_moving_average(build, inputs):
    _, _, model = build("sngp", {"features": 16, "momentum": 0.9})
    model.train()
    model.encoder.eval()
    features = model.encoder(**inputs).detach()
    model.head(features)
    first = model.head.precision.clone()
    model.head(features)
    assert torch.allclose(model.head.precision, 1.9 * first, atol=1e-5)  # 0.9 · 0.1B + 0.1B


def test_predictive_mean_variance_and_draws_agree(build, inputs):
    method, _params, model = build("sngp", {"features": 64, "S": 4000})
    model.train()
    for _ in range(3):
        model(**inputs)  # some data in the precision
    with torch.inference_mode():
        mean, var, probability = method.predictive([model], inputs)
        draws = method.sample([model], inputs)
        again = method.sample([model], inputs)
    assert mean.shape == var.shape == probability.shape == (4,)
    assert (var > 0).all()
    assert torch.allclose(probability, torch.sigmoid(mean / torch.sqrt(1 + math.pi / 8 * var)))
    logits = torch.logit(draws.double())
    assert torch.allclose(logits.mean(dim=1), mean.double(), atol=4 * float(var.max() / 4000) ** 0.5)
    assert torch.allclose(logits.var(dim=1), var.double(), rtol=0.1)
    assert torch.equal(draws, again)  # the same posterior functions for every batch


def test_cached_cholesky_follows_the_precision(build, inputs):
    method, _params, trained = build("sngp", {"features": 32, "S": 5})
    _, _, fresh = build("sngp", {"features": 32, "S": 5})
    trained.train()
    trained(**inputs)
    with torch.inference_mode():
        method.sample([fresh], inputs)  # caches the factor of P = I
        fresh.load_state_dict(trained.state_dict())
        assert torch.equal(method.sample([fresh], inputs), method.sample([trained], inputs))


def test_loss_decreases(train_steps):
    losses = train_steps("sngp", {"features": 128}, steps=12, lr=1e-2)
    assert sum(losses[-3:]) < sum(losses[:3])


def test_training_identity_ignores_draws_only():
    assert methods.create("sngp", {"S": 10}).training_identity() == (
        methods.create("sngp").training_identity()
    )


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ({"c": 0}, r"methods\.sngp\.c: Input should be greater than 0"),
        ({"S": 0}, r"methods\.sngp\.S: Input should be greater than 0"),
        ({"momentum": 1.0}, r"methods\.sngp\.momentum: Input should be less than 1"),
        ({"features": 0}, r"methods\.sngp\.features: Input should be greater than or equal to 1"),
    ],
)
def test_bad_parameters_are_one_clear_error(raw, match):
    with pytest.raises(RankuqError, match=match):
        methods.get("sngp").parse(raw, "grid.yaml: methods.sngp")


def test_the_output_layer_trains_at_its_own_rate_and_the_rest_at_the_grid_s(build):
    method, _params, model = build("sngp", {"head_lr": 0.02})
    rest, head = method.parameter_groups(model)
    assert head == {"params": [model.head.beta.weight], "lr": 0.02}
    assert "lr" not in rest and len(rest["params"]) + 1 == len(list(model.parameters()))
    plain, *more = methods.create("sngp", {"head_lr": None}).parameter_groups(model)
    assert not more and len(plain["params"]) == len(list(model.parameters()))


def test_the_length_scale_follows_the_feature_width_unless_given(build):
    """ℓ = √K on LayerNorm'd features: the kernel between two pairs depends on their correlation
    alone, k = exp(−(1 − ρ)); two fixed features at ρ = 0 give e⁻¹ on any width."""
    for width in (8, 384):
        head = methods.create("sngp", {"features": 20_000}).build_head(width)
        a, b = torch.zeros(2, width).normal_(generator=torch.Generator().manual_seed(width)).unbind()
        b = b - (a @ b) / (a @ a) * a  # orthogonal to a, so the two normalised features have ρ ≈ 0
        phi = head.features(torch.stack([a, b]))
        rho = float(torch.corrcoef(torch.stack([a, b]))[0, 1])
        assert float(phi[0] @ phi[1]) == pytest.approx(math.exp(-(1 - rho)), abs=0.03)
    fixed = methods.create("sngp", {"lengthscale": 2.0}).build_head(384)
    assert torch.allclose(fixed.features[1].frequencies.std() * 2.0, torch.tensor(1.0), atol=0.01)
