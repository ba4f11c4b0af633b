"""Trained members as Hugging Face folders: transformers' Auto classes and sentence-transformers load
them, with the numbers rankuq's scorer computes."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from transformers import AutoConfig, AutoModel, AutoModelForSequenceClassification, AutoTokenizer

from rankuq import methods, tasks
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.training_loop import fine_tune
from rankuq.methods.base import NeuralMethod, Scores

# The offline MiniLM cut to 2 layers; max_length wide enough that no WikiQA pair is cut, so rankuq
# and the outside loaders tokenise alike.
WIDE = ModelConfig(layers=2, max_length=512)
TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)  # the ``build`` fixture's


def bert() -> NeuralMethod:
    method = methods.create("bert")
    assert isinstance(method, NeuralMethod)
    return method


def probabilities(scores: Scores) -> np.ndarray:
    """The first draw's probabilities: bert scores draws, not a GP's (mean, variance)."""
    assert isinstance(scores, np.ndarray)
    return scores[:, 0]


@pytest.fixture(scope="module")
def wikiqa_rows() -> pd.DataFrame:
    """Twelve real WikiQA test pairs (question, sentence, label)."""
    table = tasks.get("wikiqa")().load("test", tasks.data_root())
    return table.select(["context", "text", "label"]).slice(0, 12).to_pandas()


@pytest.fixture(scope="module")
def bert_member(tmp_path_factory: pytest.TempPathFactory, wikiqa_rows: pd.DataFrame) -> Path:
    """A `bert` member fine-tuned a few steps on real pairs, saved as training saves it."""
    method = bert()
    model = method.build_model(WIDE, seed=0)
    pairs = [([*c], t, int(y > 0)) for c, t, y in zip(*wikiqa_rows.to_dict("list").values(), strict=True)]
    fine_tune(model, load_tokenizer(WIDE), pairs, WIDE, TrainConfig(batch_size=4, lr=1e-3, epochs=3), seed=0)
    folder = tmp_path_factory.mktemp("member")
    method.save_member(model, WIDE, folder)
    return folder


def test_a_saved_member_loads_with_the_auto_class_and_its_sigmoid_gives_rankuq_s_probabilities(
    bert_member: Path, wikiqa_rows: pd.DataFrame
) -> None:
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in bert_member.iterdir()}
    assert AutoConfig.from_pretrained(bert_member).num_labels == 1  # one relevance logit z
    loaded = AutoModelForSequenceClassification.from_pretrained(bert_member).eval()
    tokenizer = AutoTokenizer.from_pretrained(bert_member)
    contexts = [list(turns) for turns in wikiqa_rows["context"]]
    inputs = encode_pairs(tokenizer, contexts, wikiqa_rows["text"].tolist(), WIDE.max_length)
    with torch.inference_mode():
        logits = loaded(**inputs).logits
    ours = probabilities(bert().make_scorer(WIDE, [bert_member], bert_member)(wikiqa_rows))
    np.testing.assert_allclose(torch.sigmoid(logits[:, 0]).numpy(), ours, atol=1e-6)
    assert np.ptp(ours) > 0.05  # trained: the pairs get different probabilities


def test_sentence_transformers_cross_encoder_predicts_and_ranks_a_member_as_rankuq_scores(
    bert_member: Path, wikiqa_rows: pd.DataFrame
) -> None:
    """A member is a one-logit CrossEncoder: ``predict`` gives σ(z), rankuq's P(relevant), and
    ``rank`` orders one question's sentences as rankuq's scorer does."""
    from sentence_transformers import CrossEncoder

    cross = CrossEncoder(str(bert_member), device="cpu")
    assert cross.num_labels == 1 and cross.config.id2label == {0: "relevant"}
    pairs = [
        (turns[0], text) for turns, text in zip(wikiqa_rows["context"], wikiqa_rows["text"], strict=True)
    ]
    ours = probabilities(bert().make_scorer(WIDE, [bert_member], bert_member)(wikiqa_rows))
    np.testing.assert_allclose(cross.predict(pairs, batch_size=4), ours, atol=1e-6)
    first = wikiqa_rows["context"].map(lambda turns: turns[0]) == pairs[0][0]
    question, texts = pairs[0][0], wikiqa_rows["text"][first].tolist()
    assert len(texts) >= 3  # one question's candidate sentences
    ranked = cross.rank(question, texts, batch_size=4)
    assert [hit["corpus_id"] for hit in ranked] == list(np.argsort(-ours[first.to_numpy()], kind="stable"))
    np.testing.assert_allclose(
        [hit["score"] for hit in ranked], np.sort(ours[first.to_numpy()])[::-1], atol=1e-6
    )


def test_a_member_is_a_backbone_to_fine_tune_again(bert_member: Path) -> None:
    """`rankuq run --backbone RUN_DIR/models/<key>`: the member's head and encoder are kept."""
    again = build_cross_encoder(ModelConfig(backbone=str(bert_member)), seed=5)
    saved = bert().load_member(WIDE, bert_member)
    for name, value in saved.state_dict().items():
        assert torch.equal(again.state_dict()[name], value), name


def test_an_sngp_member_s_transformer_loads_with_its_spectral_bounds_folded_in(
    build, inputs: dict[str, torch.Tensor], labels: torch.Tensor, tmp_path: Path
) -> None:
    """The transformer part of a head method loads with AutoModel and computes the features the
    ranker's bounded encoder computes; the ranker itself comes back whole from the two files."""
    method, _, model = build("sngp", {"S": 3, "features": 32})
    model.train()
    method.loss(model, inputs, labels).backward()  # a power-iteration step: u, v differ from the start
    method.save_member(model, TINY_MODEL, tmp_path)
    model.eval()
    transformer = AutoModel.from_pretrained(tmp_path).eval()
    with torch.inference_mode():
        np.testing.assert_allclose(
            transformer(**inputs).pooler_output.numpy(), model.encoder(**inputs).numpy(), atol=1e-6
        )
    bounded = [key for key in model.state_dict() if ".parametrizations." in key]
    assert bounded and all(key not in transformer.state_dict() for key in bounded)
    loaded = method.load_member(TINY_MODEL, tmp_path)
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in model.state_dict().items())
