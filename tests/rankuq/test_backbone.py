"""The backbone loader on tiny checkpoints the tests save: a RoBERTa, a CrossEncoder, broken ones."""

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import (
    AutoTokenizer,
    BertConfig,
    BertForSequenceClassification,
    RobertaConfig,
    RobertaForSequenceClassification,
    RobertaModel,
)

from rankuq import methods
from rankuq.backbone import ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer, offline_minilm
from rankuq.errors import RankuqError
from rankuq.methods.base import NeuralMethod, relevance_probability
from rankuq.methods.encoders import BertFeatures

SHAPE: dict[str, Any] = {  # Any: transformers' typed configs take these as **kwargs
    "vocab_size": 30522,
    "hidden_size": 32,
    "num_attention_heads": 2,
    "intermediate_size": 64,
}
QUERY = "roberta"  # a weight every test compares: the first layer's query projection


def tiny_bert(num_labels: int) -> BertConfig:
    """A 2-layer BERT config of MiniLM's vocabulary with a ``num_labels``-way head."""
    return BertConfig(**{**SHAPE, "num_hidden_layers": 2, "num_labels": num_labels})


def save(model: Any, folder: Path) -> Path:
    """``model`` with MiniLM's tokenizer, as a user's checkpoint folder."""
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(offline_minilm()).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def roberta(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RobertaModel]:
    """A tiny RoBERTa encoder without a head (type_vocab_size 2 for the BERT tokenizer's segments)."""
    torch.manual_seed(3)
    config = RobertaConfig(
        num_hidden_layers=2, max_position_embeddings=80, type_vocab_size=2, pad_token_id=0, **SHAPE
    )
    model = RobertaModel(config, add_pooling_layer=False)
    return save(model, tmp_path_factory.mktemp("roberta")), model


def pairs(config: ModelConfig) -> dict[str, torch.Tensor]:
    return encode_pairs(load_tokenizer(config), [["who wrote hamlet"]], ["shakespeare wrote it"], 32)


def test_a_roberta_checkpoint_loads_its_own_weights(roberta: tuple[Path, RobertaModel]) -> None:
    folder, saved = roberta
    config = ModelConfig(backbone=str(folder), dropout=0.25)
    model = build_cross_encoder(config, seed=0)
    assert isinstance(model, RobertaForSequenceClassification) and model.config.num_labels == 2
    loaded = model.roberta.encoder.layer[0].attention.self.query.weight
    torch.testing.assert_close(loaded, saved.encoder.layer[0].attention.self.query.weight)
    assert model.config.hidden_dropout_prob == model.config.attention_probs_dropout_prob == 0.25
    assert model(**pairs(config)).logits.shape == (1, 2)


def test_a_roberta_checkpoint_can_be_cut_to_fewer_layers(roberta: tuple[Path, RobertaModel]) -> None:
    folder, saved = roberta
    model: Any = build_cross_encoder(ModelConfig(backbone=str(folder), layers=1), seed=0)
    assert len(model.roberta.encoder.layer) == 1
    torch.testing.assert_close(
        model.roberta.embeddings.word_embeddings.weight, saved.embeddings.word_embeddings.weight
    )
    with pytest.raises(RankuqError, match=r"has 2 layers; set model\.layers to at most 2"):
        build_cross_encoder(ModelConfig(backbone=str(folder), layers=3), seed=0)


def test_the_feature_heads_pool_the_first_token_of_a_backbone_without_pooler(
    roberta: tuple[Path, RobertaModel],
) -> None:
    config = ModelConfig(backbone=str(roberta[0]))
    features = BertFeatures(config, seed=0)
    assert features.feature_layers() == [features.pooler] and features.dim == 32
    assert features(**pairs(config)).shape == (1, 32)
    sngp = methods.create("sngp")
    assert isinstance(sngp, NeuralMethod)
    ranker = sngp.build_model(config, seed=0)
    assert ranker(**pairs(config)).shape == (1,)


def test_a_cross_encoder_checkpoint_keeps_its_head_as_sigmoid_of_its_logit(tmp_path: Path) -> None:
    """sentence-transformers saves a CrossEncoder as a one-label sequence classifier."""
    torch.manual_seed(4)
    cross = BertForSequenceClassification(tiny_bert(num_labels=1)).eval()
    config = ModelConfig(backbone=str(save(cross, tmp_path / "ce")), dropout=0.1)
    model = build_cross_encoder(config, seed=0).eval()
    assert model.config.num_labels == 2
    inputs = pairs(config)
    with torch.no_grad():
        expected = torch.sigmoid(cross(**inputs).logits[:, 0])
        torch.testing.assert_close(relevance_probability(model(**inputs).logits), expected)


def test_a_two_label_classifier_keeps_its_head(tmp_path: Path) -> None:
    torch.manual_seed(5)
    member = BertForSequenceClassification(tiny_bert(num_labels=2))
    model: Any = build_cross_encoder(ModelConfig(backbone=str(save(member, tmp_path / "m"))), seed=0)
    torch.testing.assert_close(model.classifier.weight, member.classifier.weight)


def test_a_checkpoint_missing_encoder_weights_is_refused(
    roberta: tuple[Path, RobertaModel], tmp_path: Path
) -> None:
    folder = save(roberta[1], tmp_path / "broken")
    weights = load_file(folder / "model.safetensors")
    del weights["encoder.layer.1.output.dense.weight"]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(
        RankuqError, match=r"lacks 1 encoder weights .*roberta\.encoder\.layer\.1\.output\.dense"
    ):
        build_cross_encoder(ModelConfig(backbone=str(folder)), seed=0)


def test_a_folder_that_is_no_checkpoint_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(RankuqError, match=r"cannot load it as a sequence classifier") as error:
        build_cross_encoder(ModelConfig(backbone=str(tmp_path)), seed=0)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("name", ["mc_dropout", "last_layer_mc"])
def test_members_on_a_roberta_backbone_score_through_the_methods(
    roberta: tuple[Path, RobertaModel], tmp_path: Path, name: str
) -> None:
    """A member saved as training saves it (``save_member``) loads and scores on a non-BERT backbone."""
    config = ModelConfig(backbone=str(roberta[0]), max_length=32)
    method = methods.create(name, {"T": 3}, "test")
    assert isinstance(method, NeuralMethod)
    checkpoint = tmp_path / "member"
    method.save_member(method.build_model(config, seed=1), config, checkpoint)
    score = method.make_scorer(config, [checkpoint], tmp_path)
    batch = pd.DataFrame({"context": [["who wrote hamlet"]] * 2, "text": ["shakespeare", "paris"]})
    draws = score(batch)
    assert isinstance(draws, np.ndarray)  # draws, not a GP's (mean, variance)
    assert draws.shape == (2, 3) and ((draws > 0) & (draws < 1)).all()


def test_offline_minilm_truncates_to_l_layers():
    model = build_cross_encoder(ModelConfig(layers=2), seed=0)
    assert model.config.num_hidden_layers == 2
    assert len(model.bert.encoder.layer) == 2
    assert model.config.num_labels == 2


def test_missing_backbone_folder_is_a_clear_error(tmp_path):
    with pytest.raises(RankuqError, match=r"model\.backbone"):
        build_cross_encoder(ModelConfig(backbone=str(tmp_path / "nowhere")), seed=0)
