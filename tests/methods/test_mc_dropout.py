"""`mc_dropout`: T stochastic passes with dropout on."""

import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder
from rankuq.methods.dropout import use_fast_dropout

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


def test_stacked_passes_draw_from_the_same_distribution_as_the_loop(inputs):
    """A GPU's T passes as one batch of T copies (``stacked``): with dropout off every copy is the
    deterministic pass; with it on, each row's draws have the loop's mean and spread (T = 400)."""
    method = methods.create("mc_dropout", {"T": 400})
    quiet = build_cross_encoder(TINY_MODEL.model_copy(update={"dropout": 0.0}), 0).eval()
    with torch.inference_mode():
        single = torch.softmax(quiet(**inputs).logits, dim=-1)[:, 1]
        assert torch.allclose(method.stacked(quiet, inputs), single[:, None].expand(-1, 400), atol=1e-6)
        model = use_fast_dropout(build_cross_encoder(TINY_MODEL.model_copy(update={"dropout": 0.3}), 0))
        model.train()
        torch.manual_seed(0)
        stacked = method.stacked(model, inputs)
        looped = method.sample([model], inputs)  # on the CPU: the loop
    assert stacked.shape == looped.shape == (len(inputs["input_ids"]), 400)
    assert (stacked.mean(dim=1) - looped.mean(dim=1)).abs().max() < 4 * looped.std(dim=1).max() / 20
    assert torch.allclose(stacked.std(dim=1), looped.std(dim=1), rtol=0.2)
