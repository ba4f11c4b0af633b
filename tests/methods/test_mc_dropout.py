"""`mc_dropout`: T stochastic passes with dropout on."""

import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)


def test_mc_dropout_samples_t_passes(inputs):
    method = methods.create("mc_dropout", {"T": 7})
    model = build_cross_encoder(TINY_MODEL.model_copy(update={"dropout": 0.3}), 0)
    calls = []
    model.register_forward_hook(lambda module, args, kwargs, out: calls.append(1), with_kwargs=True)
    with torch.inference_mode():
        samples = method.sample([model], inputs)
    assert samples.shape == (len(inputs["input_ids"]), 7)
    assert len(calls) == 7  # one pass over the batch per draw
    assert (samples.var(dim=1) > 0).all()
