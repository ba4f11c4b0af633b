import pytest

from rankuq import methods
from rankuq.errors import RankuqError
from rankuq.methods.sngp import SNGPHead


def test_gpf_is_sngp_with_focal_loss(build, inputs, labels):
    method, _params, model = build("gpf", {"gamma": 3.0, "features": 32})
    assert isinstance(model.head, SNGPHead)
    sngp = methods.create("sngp", {"features": 32})
    assert method.training_identity() != sngp.training_identity()
    model.train()
    loss = method.loss(model, inputs, labels)
    assert loss < sngp.loss(model, inputs, labels)


def test_loss_decreases(train_steps):
    losses = train_steps("gpf", {"features": 128, "gamma": 1.0}, steps=12, lr=1e-2)
    assert sum(losses[-3:]) < sum(losses[:3])


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ({"gamma": -0.5}, r"methods\.gpf\.gamma: Input should be greater than or equal to 0"),
        ({"S": -1}, r"methods\.gpf\.S: Input should be greater than 0"),
    ],
)
def test_bad_parameters_are_one_clear_error(raw, match):
    with pytest.raises(RankuqError, match=match):
        methods.get("gpf").parse(raw, "grid.yaml: methods.gpf")
