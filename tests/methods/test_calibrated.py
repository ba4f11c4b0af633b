"""`platt` and `isotonic`: calibration maps of bert's logit gap, fitted on dev, checked against
worked values and against the maps they are defined by."""

import numpy as np
import pandas as pd
import pytest
import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder
from rankuq.errors import RankuqError
from rankuq.methods.calibrators import IsotonicCalibrator, PlattScaler, TemperatureScaler

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


@pytest.mark.parametrize("name", ["temperature", "platt", "isotonic"])
def test_a_fitted_map_rescores_bert_and_an_unfitted_one_refuses(name, tmp_path):
    checkpoint = tmp_path / "member"
    model = build_cross_encoder(TINY_MODEL, seed=0)
    with torch.no_grad():
        model.classifier.weight.mul_(300)  # an over-confident cross-encoder
    methods.create("bert").save_member(model, TINY_MODEL, checkpoint)
    method = methods.create(name)
    assert method.posthoc and method.training_identity() is None  # bert's model, not retrained
    fitted = method.fit(TINY_MODEL, [checkpoint], ROWS)
    bert = methods.create("bert").make_scorer(TINY_MODEL, [checkpoint], tmp_path)(ROWS)[:, 0]
    scores = method.make_scorer(TINY_MODEL, [checkpoint], tmp_path, fitted)(ROWS)
    assert scores.shape == (6, 1) and ((scores >= 0) & (scores <= 1)).all()
    if name == "temperature":  # T > 0: bert's ranking, only the probabilities move
        assert (np.argsort(scores[:, 0]) == np.argsort(bert)).all() and fitted["temperature"] > 1
    gap = np.log(bert / (1 - bert))
    kind = {"temperature": TemperatureScaler, "platt": PlattScaler, "isotonic": IsotonicCalibrator}[name]
    np.testing.assert_allclose(scores[:, 0], kind.from_state(fitted)(gap), atol=1e-4)
    with pytest.raises(RankuqError, match=f"{name} scores only once fitted"):
        method.make_scorer(TINY_MODEL, [checkpoint], tmp_path)


def test_each_scorer_holds_its_own_map_and_the_method_stays_stateless(tmp_path):
    """Two scorers of one method instance, built from different fitted temperatures, each keep
    theirs (the map lives in the scorer's closure, not on the method)."""
    checkpoint = tmp_path / "member"
    methods.create("bert").save_member(build_cross_encoder(TINY_MODEL, seed=0), TINY_MODEL, checkpoint)
    method = methods.create("temperature")
    state = vars(method).copy()
    cool = method.make_scorer(TINY_MODEL, [checkpoint], tmp_path, {"name": "temperature", "temperature": 0.5})
    hot = method.make_scorer(TINY_MODEL, [checkpoint], tmp_path, {"name": "temperature", "temperature": 4.0})
    assert vars(method) == state
    bert = methods.create("bert").make_scorer(TINY_MODEL, [checkpoint], tmp_path)(ROWS)[:, 0]
    gap = np.log(bert / (1 - bert))
    np.testing.assert_allclose(cool(ROWS)[:, 0], 1 / (1 + np.exp(-gap / 0.5)), atol=1e-5)
    np.testing.assert_allclose(hot(ROWS)[:, 0], 1 / (1 + np.exp(-gap / 4.0)), atol=1e-5)
