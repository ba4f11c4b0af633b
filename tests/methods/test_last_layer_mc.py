import pytest
import torch

from rankuq import methods
from rankuq.errors import RankuqError
from rankuq.methods.base import NeuralMethod

TINY_L1 = {"backbone": "tiny", "max_length": 32, "layers": 1}


def sample(method, params, model, inputs):
    with torch.inference_mode():
        return method.sample([model], inputs)


def test_head_is_sampled_t_times_on_one_encoder_pass(build, inputs):
    method, params, model = build("last_layer_mc", {"T": 40, "p": 0.3})
    calls = {"encoder": 0, "head": 0}
    model.encoder.register_forward_hook(lambda *_: calls.__setitem__("encoder", calls["encoder"] + 1))
    model.head.register_forward_hook(lambda *_: calls.__setitem__("head", calls["head"] + 1))
    draws = sample(method, params, model, inputs)
    assert draws.shape == (4, 40)
    assert calls == {"encoder": 1, "head": 1}  # T copies of the features in one head pass
    assert ((draws > 0) & (draws < 1)).all()
    assert (draws.var(dim=1) > 0).all()  # dropout really sampled


def test_encoder_is_deterministic_at_inference(build, inputs):
    method, params, model = build("last_layer_mc", {"T": 5})
    sample(method, params, model, inputs)
    assert not model.encoder.training and model.head.training
    with torch.inference_mode():
        assert torch.equal(model.encoder(**inputs), model.encoder(**inputs))


@pytest.mark.parametrize(
    "raw", [{"encoder": "conv_knrm"}, {"loss": "pairwise_hinge"}], ids=["conv_knrm", "hinge"]
)
def test_works_on_other_encoders_and_losses(build, inputs, raw):
    method, params, model = build("last_layer_mc", {"T": 8, **raw})
    draws = sample(method, params, model, inputs)
    assert draws.shape == (4, 8)
    assert (draws.var(dim=1) > 0).all()


def test_backbone_depth_follows_model_config(build, inputs):
    from rankuq.backbone import ModelConfig

    method, params, model = build("last_layer_mc", {"T": 3}, model=ModelConfig(**TINY_L1))
    assert len(model.encoder.bert.encoder.layer) == 1
    assert sample(method, params, model, inputs).shape == (4, 3)


def test_training_identity_ignores_t_only():
    def identity_of(raw: dict) -> dict | None:
        method = methods.create("last_layer_mc", raw)
        assert isinstance(method, NeuralMethod)
        return method.training_identity()

    identity = identity_of({"T": 150})
    assert identity == identity_of({"T": 10})
    assert identity["method"] == "last_layer_mc"
    assert identity != identity_of({"loss": "pairwise_ce"})


@pytest.mark.parametrize("loss", ["pointwise_ce", "pairwise_ce", "pairwise_hinge"])
def test_loss_decreases(train_steps, loss):
    losses = train_steps("last_layer_mc", {"loss": loss, "p": 0.1}, steps=15, lr=1e-2)
    assert sum(losses[-3:]) < sum(losses[:3])


def test_pairwise_losses_ask_for_whole_query_batches():
    assert methods.create("last_layer_mc", {"loss": "pairwise_hinge"}).whole_query_batches()
    assert not methods.create("last_layer_mc", {}).whole_query_batches()
    assert not methods.create("bert").whole_query_batches()


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ({"T": 0}, r"last_layer_mc\.T: Input should be greater than 0"),
        ({"p": 1.0}, r"last_layer_mc\.p: Input should be less than 1"),
        ({"loss": "listwise"}, r"last_layer_mc\.loss: Input should be 'pointwise_ce', 'pairwise_ce' or"),
        ({"encoder": "lstm"}, r"last_layer_mc\.encoder: Input should be 'bert', 'bert_mean' or 'conv_knrm'"),
    ],
)
def test_bad_parameters_are_one_clear_error(raw, match):
    with pytest.raises(RankuqError, match=match):
        methods.get("last_layer_mc").parse(raw, "grid.yaml: methods.last_layer_mc")
