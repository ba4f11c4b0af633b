"""`bert`: the deterministic cross-encoder, one draw."""

import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)


def test_bert_is_deterministic_with_one_sample(inputs):
    method, model = methods.create("bert"), build_cross_encoder(TINY_MODEL, 0)
    with torch.inference_mode():
        first, second = method.sample([model], inputs), method.sample([model], inputs)
    assert first.shape == (len(inputs["input_ids"]), 1)
    assert torch.equal(first, second)
    assert ((first > 0) & (first < 1)).all()
