import math

import pytest
import torch

from rankuq import methods
from rankuq.backbone import ModelConfig, build_cross_encoder
from rankuq.errors import RankuqError
from rankuq.methods.encoders import ConvKNRMFeatures


def test_features_are_kernel_pooled_per_gram_pair(build, inputs):
    _, _, model = build("conv_knrm", {})
    with torch.inference_mode():
        features = model.encoder(**inputs)
    assert model.encoder.dim == 3 * 3 * 11
    assert features.shape == (4, 99)
    assert torch.isfinite(features).all()


def test_features_ignore_padding_and_batch_neighbours(build, encode):
    _, _, model = build("conv_knrm", {})
    alone, padded = encode(slice(3, None)), encode(slice(2, None))  # a longer pair pads the last one
    assert padded["input_ids"].shape[1] > alone["input_ids"].shape[1]
    model.eval()
    with torch.inference_mode():
        assert torch.allclose(model.encoder(**alone)[0], model.encoder(**padded)[1], atol=1e-6)


def test_exact_match_kernel_counts_shared_words():
    embeddings = torch.eye(8)
    encoder = ConvKNRMFeatures(embeddings, special_ids=[0], filters=4, grams=1)
    with torch.no_grad():
        encoder.convs[0].weight.copy_(torch.eye(4, 8)[:, :, None])
        encoder.convs[0].bias.zero_()
    batch = {
        "input_ids": torch.tensor([[1, 2, 0, 1, 3, 0]]),
        "token_type_ids": torch.tensor([[0, 0, 0, 1, 1, 1]]),
        "attention_mask": torch.ones(1, 6, dtype=torch.long),
    }
    exact_match = encoder(**batch)[0, 0]
    # Query word 1 matches one document word (log 1 = 0), word 2 none (log of the 1e-10 floor).
    assert exact_match.item() == pytest.approx(0.01 * math.log(1e-10), rel=1e-4)


def test_word_embeddings_come_from_the_backbone():
    encoder = ConvKNRMFeatures.from_config(ModelConfig(), seed=0)
    minilm = build_cross_encoder(ModelConfig(), seed=0).get_input_embeddings().weight
    assert torch.equal(encoder.embed.weight, minilm)
    assert encoder.embed.weight.shape[1] == 384


def test_deterministic_single_draw(build, inputs):
    method, _params, model = build("conv_knrm", {})
    with torch.inference_mode():
        first, second = (method.sample([model], inputs) for _ in range(2))
    assert first.shape == (4, 1)
    assert torch.equal(first, second)


@pytest.mark.parametrize("loss", ["pointwise_ce", "pairwise_ce"])
def test_loss_decreases(train_steps, loss):
    losses = train_steps("conv_knrm", {"loss": loss}, steps=10, lr=1e-2)
    assert sum(losses[-3:]) < sum(losses[:3])


def test_unknown_loss_is_a_clear_error():
    with pytest.raises(RankuqError, match=r"methods\.conv_knrm\.loss: Input should be"):
        methods.get("conv_knrm").parse({"loss": "hinge"}, "grid.yaml: methods.conv_knrm")
