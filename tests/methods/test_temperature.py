import numpy as np
import pandas as pd
import pytest
import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder
from rankuq.errors import RankuqError
from rankuq.methods.temperature import fit_temperature

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)
ROWS = pd.DataFrame(
    {
        "qid": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "context": [["who wrote hamlet"]] * 2 + [["how tall is everest"]] * 2 + [["where is paris"]] * 2,
        "cid": list("abcdef"),
        "text": ["shakespeare wrote it", "paris", "8849 m", "the sea", "in france", "a cat"],
        "label": [1, 0, 1, 0, 1, 0],
    }
)


def test_fit_recovers_the_temperature_of_the_labels():
    generator = torch.Generator().manual_seed(0)
    gap = 6 * torch.randn(20_000, generator=generator)
    labels = torch.bernoulli(torch.sigmoid(gap / 2.5), generator=generator).long()
    logits = torch.stack([torch.zeros_like(gap), gap], dim=1)
    assert fit_temperature(logits, labels) == pytest.approx(2.5, rel=0.05)


def test_fit_then_score_rescales_bert_and_keeps_its_ranking(tmp_path):
    checkpoint = tmp_path / "model.pt"
    model = build_cross_encoder(TINY_MODEL, seed=0)
    with torch.no_grad():
        model.classifier.weight.mul_(300)  # an over-confident cross-encoder: T > 1 on dev
    torch.save(model.state_dict(), checkpoint)
    method = methods.create("temperature")
    fitted = method.fit(TINY_MODEL, [checkpoint], ROWS)
    assert fitted["temperature"] > 1
    scores = {
        "bert": methods.create("bert").make_scorer(TINY_MODEL, [checkpoint], tmp_path)(ROWS),
        "temperature": method.make_scorer(TINY_MODEL, [checkpoint], tmp_path, fitted)(ROWS),
    }
    assert scores["temperature"].shape == (6, 1)
    assert not np.allclose(scores["temperature"], scores["bert"])
    assert (np.argsort(scores["temperature"][:, 0]) == np.argsort(scores["bert"][:, 0])).all()
    # softmax(z / T)[1] = σ((z1 − z0) / T): the scores are bert's logit gaps divided by T
    gap = np.log(scores["bert"][:, 0] / (1 - scores["bert"][:, 0]))
    expected = 1 / (1 + np.exp(-gap / fitted["temperature"]))
    np.testing.assert_allclose(scores["temperature"][:, 0], expected, rtol=1e-4)
    assert method.posthoc and method.training_identity() is None  # shares bert's model


def test_an_unfitted_temperature_refuses_to_score(tmp_path):
    checkpoint = tmp_path / "model.pt"
    torch.save(build_cross_encoder(TINY_MODEL, seed=0).state_dict(), checkpoint)
    with pytest.raises(RankuqError, match="temperature scores only once fitted"):
        methods.create("temperature").make_scorer(TINY_MODEL, [checkpoint], tmp_path)
