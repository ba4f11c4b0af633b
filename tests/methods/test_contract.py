"""Every neural method: [n, S] relevance draws in [0, 1], and a trained member survives save and load."""

import pytest
import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig
from rankuq.methods.base import NeuralMethod

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)
SMALL = {  # each method's parameters, kept small
    "bert": {},
    "mc_dropout": {"T": 3},
    "last_layer_mc": {"T": 3},
    "conv_knrm": {},
    "sngp": {"S": 3, "features": 32},
    "gpf": {"S": 3, "features": 32},
    "pg_gp": {"S": 3, "features": 32, "chains": 2, "steps": 2},
}


def test_every_method_is_registered():
    expected = {"bert", "mc_dropout", "ensemble", "bm25", "temperature", *SMALL}
    assert expected <= set(methods.names())
    assert all(issubclass(methods.get(name), NeuralMethod) for name in expected - {"bm25"})


@pytest.mark.parametrize("name", sorted(SMALL))
def test_draws_survive_a_save_and_load(build, inputs, labels, name, tmp_path):
    method, params, model = build(name, SMALL[name], model=TINY_MODEL)
    model.train()
    method.loss(model, inputs, labels).backward()  # fills buffers (posterior statistics)
    method.save_member(model, TINY_MODEL, tmp_path)
    loaded = method.load_member(TINY_MODEL, tmp_path)
    draws = []
    for member in (model, loaded):
        torch.manual_seed(0)  # the same dropout masks for both
        with torch.inference_mode():
            draws.append(method.sample([member], inputs))
    count = getattr(params, "S", None) or getattr(params, "T", 1)
    assert draws[0].shape == (4, count)
    assert torch.isfinite(draws[0]).all() and ((draws[0] >= 0) & (draws[0] <= 1)).all()
    assert torch.equal(draws[0], draws[1])
