"""A new relevance head trains at a rate of its own where one is set (issue 47): the grid's
``train.head_lr`` for the shared cross-encoder's classifier and for a head method that sets none,
the method's own ``head_lr`` first; unset, one group and the member keys of before."""

import pytest

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench.config.training import TrainConfig
from rankuq.errors import RankuqError

TINY = ModelConfig(backbone="tiny", max_length=16)


def test_the_cross_encoder_s_classifier_takes_the_grid_s_head_rate():
    bert = methods.create("bert", {})
    model = bert.build_model(TINY, 0)
    (alone,) = bert.parameter_groups(model)
    assert len(alone["params"]) == len(list(model.parameters()))
    rest, head = bert.parameter_groups(model, 1e-3)
    assert head["lr"] == 1e-3 and head["params"] == list(model.classifier.parameters())
    assert len(rest["params"]) + len(head["params"]) == len(list(model.parameters())) and "lr" not in rest


def test_a_head_method_s_own_rate_wins_over_the_grid_s():
    last = methods.create("last_layer_mc", {"head_lr": 3e-3})
    model = last.build_model(TINY, 0)
    assert last.parameter_groups(model, 1e-3)[1]["lr"] == 3e-3
    plain = methods.create("last_layer_mc", {})
    _rest, head = plain.parameter_groups(model, 1e-3)
    assert head == {"params": list(model.head.parameters()), "lr": 1e-3}
    assert len(plain.parameter_groups(model)) == 1


def test_an_unset_head_rate_leaves_the_member_keys_as_they_were():
    assert "head_lr" not in TrainConfig().model_dump()
    assert TrainConfig(head_lr=1e-3).model_dump()["head_lr"] == 1e-3
    assert "head_lr" not in methods.create("last_layer_mc", {}).training_identity()


def test_a_model_without_a_classifier_is_one_line():
    import torch

    with pytest.raises(RankuqError, match="has no classifier module to give it; drop head_lr"):
        methods.create("bert", {}).parameter_groups(torch.nn.Linear(2, 2), 1e-3)
