"""What every neural method shares: rows scored in length buckets, the same as row by row; with no
member, the backbone scored as given (zero-shot)."""

import numpy as np
import pandas as pd
import pytest
import torch

from rankuq import methods
from rankuq.backbone import ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer, offline_minilm
from rankuq.errors import RankuqError
from rankuq.methods.base import length_buckets


def test_length_buckets_sort_rows_and_cut_each_chunk_to_its_longest_row():
    mask = torch.tensor([[1, 1, 1], [1, 0, 0], [1, 1, 0]])
    chunks = list(length_buckets({"attention_mask": mask, "input_ids": mask * 7}, size=2))
    assert [rows.tolist() for rows, _ in chunks] == [[1, 2], [0]]
    assert chunks[0][1]["input_ids"].tolist() == [[7, 0], [7, 7]]
    assert chunks[1][1]["attention_mask"].shape == (1, 3)


def test_a_bucketed_scorer_call_equals_scoring_row_by_row(tmp_path, tiny_model, batch):
    checkpoint = tmp_path / "member"
    methods.create("bert").save_member(build_cross_encoder(tiny_model, seed=0), tiny_model, checkpoint)
    score = methods.create("bert").make_scorer(tiny_model, [checkpoint], tmp_path)
    rows = pd.concat([batch] * 30, ignore_index=True)  # 90 rows: two buckets of 64 and 26
    rows["text"] = [text + " word" * (i % 7) for i, text in enumerate(rows.text)]
    alone = np.concatenate([score(rows.iloc[[i]]) for i in range(len(rows))])
    np.testing.assert_allclose(score(rows), alone, atol=1e-6)


def real_rows(count: int) -> pd.DataFrame:
    """The first ``count`` real WikiQA test rows (question, sentence, label)."""
    from rankuq import tasks

    table = tasks.get("wikiqa")().load("test", tasks.data_root()).slice(0, count)
    return table.select(["qid", "context", "cid", "text", "label"]).to_pandas()


def test_with_no_member_the_checkpoint_scores_as_given_sigmoid_of_its_one_logit(cross_encoder, tmp_path):
    """Zero-shot (train.epochs 0): `bert` scores the user's checkpoint with its own head, σ(z),
    the probabilities sentence-transformers' CrossEncoder gives, so it ranks as the checkpoint does."""
    from sentence_transformers import CrossEncoder

    rows = real_rows(40)
    config = ModelConfig(backbone=str(cross_encoder), max_length=512)  # no pair cut: tokenised alike
    ours = methods.create("bert").make_scorer(config, [], tmp_path)(rows)[:, 0]
    pairs = [(turns[0], text) for turns, text in zip(rows["context"], rows["text"], strict=True)]
    own = CrossEncoder(str(cross_encoder), device="cpu").predict(pairs, batch_size=8)
    np.testing.assert_allclose(ours, own, atol=1e-6)
    assert np.ptp(ours) > 0.3  # spread: the ordering below is no tie-break
    np.testing.assert_array_equal(np.argsort(-ours, kind="stable"), np.argsort(-own, kind="stable"))


def test_the_shipped_minilm_as_a_cross_encoder_scores_as_given(tmp_path):
    """All-MiniLM-L6-v2 (6 layers, the shipped weights) with a one-logit head, saved as a user's
    checkpoint: scored as given, its probabilities and ranking are transformers' σ(logit)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(2)
    model = AutoModelForSequenceClassification.from_pretrained(offline_minilm(), num_labels=1).eval()
    with torch.no_grad():
        model.classifier.weight.mul_(30.0)
    model.save_pretrained(tmp_path / "minilm-ce")
    AutoTokenizer.from_pretrained(offline_minilm()).save_pretrained(tmp_path / "minilm-ce")
    rows = real_rows(24)
    config = ModelConfig(backbone=str(tmp_path / "minilm-ce"), max_length=512)
    ours = methods.create("bert").make_scorer(config, [], tmp_path)(rows)[:, 0]
    inputs = encode_pairs(
        load_tokenizer(config), [list(c) for c in rows["context"]], rows["text"].tolist(), 512
    )
    with torch.inference_mode():
        own = torch.sigmoid(model(**inputs).logits[:, 0]).numpy()
    np.testing.assert_allclose(ours, own, atol=1e-5)
    assert np.ptp(ours) > 0.1
    np.testing.assert_array_equal(np.argsort(-ours, kind="stable"), np.argsort(-own, kind="stable"))


def test_a_checkpoint_without_a_trained_head_is_refused_as_given(tmp_path):
    """MiniLM's folder is an encoder: scored as given it would rank by a random head."""
    with pytest.raises(RankuqError, match=r"no trained relevance head to score as given .* classifier\.bias"):
        methods.create("bert").make_scorer(ModelConfig(backbone=str(offline_minilm())), [], tmp_path)
