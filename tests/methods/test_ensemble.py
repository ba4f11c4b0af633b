"""`ensemble`: M members from different seeds, a draw each."""

import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)


def test_ensemble_stacks_members(inputs):
    models = [build_cross_encoder(TINY_MODEL, seed) for seed in range(3)]
    with torch.inference_mode():
        samples = methods.create("ensemble", {"M": 3}).sample(models, inputs)
    assert samples.shape == (len(inputs["input_ids"]), 3)
    assert (samples.var(dim=1) > 0).all()  # differently seeded heads disagree


def test_ensemble_trains_m_members():
    assert methods.create("ensemble", {"M": 4}).members() == 4
    assert methods.create("bert").members() == 1
