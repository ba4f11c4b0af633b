"""What every neural method shares: rows scored in length buckets, the same as row by row; with no
member, the backbone scored as given (zero-shot)."""

import numpy as np
import pandas as pd
import pytest
import torch

from rankuq import methods
from rankuq.backbone import ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer, offline_minilm
from rankuq.errors import RankuqError
from rankuq.methods.base import BUCKET_SIZE, GPU_ROWS, activation_bytes, length_buckets


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


def test_forward_rows_on_a_gpu_come_from_free_memory_except_for_methods_with_draws(monkeypatch):
    """On a CPU 64 rows per pass; on a GPU up to GPU_ROWS, fewer where half the free memory cannot hold
    them, but exactly GPU_ROWS (mc_dropout: its T stacked copies in GPU_ROWS) for the methods whose
    dropout masks depend on the rows drawn together: their numbers never follow the card's memory."""
    model = build_cross_encoder(ModelConfig(layers=2, max_length=128), seed=0)
    per_row = activation_bytes(model, 128)
    cuda = torch.device("cuda")
    for free, deterministic in ((1 << 40, GPU_ROWS), (200 * per_row, 100), (1, 1)):
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device, free=free: (free, free))
        assert methods.create("bert").forward_rows(cuda, [model], 128) == deterministic
        assert methods.create("ensemble").forward_rows(cuda, [model], 128) == deterministic
        assert methods.create("last_layer_mc").forward_rows(cuda, [model], 128) == GPU_ROWS
        assert methods.create("mc_dropout", {"T": 10}).forward_rows(cuda, [model], 128) == GPU_ROWS // 10
    assert methods.create("bert").forward_rows(torch.device("cpu"), [model], 128) == BUCKET_SIZE


def test_dynamic_padding_moves_probabilities_by_less_than_1e_5_and_no_metric(tmp_path):
    """Rows sorted by length, each pass padded to its own longest, against every row padded to
    max_length in one pass: the attention masks' padding changes fp32 sums only in their last bits
    (MiniLM-L2, 300 real WikiQA rows: measured 3e-8); the board's metrics are equal to 4 decimals."""
    from rankuq.bench import metrics
    from rankuq.bench.predictions import frame_predictions

    config = ModelConfig(layers=2, max_length=128)
    method = methods.create("bert")
    model = build_cross_encoder(config, seed=0)
    rows = real_rows(300)
    contexts = [list(turns) for turns in rows["context"]]
    tokenizer = load_tokenizer(config)
    padded = dict(
        tokenizer(
            [c[0] for c in contexts],
            rows["text"].tolist(),
            truncation="longest_first",
            max_length=128,
            padding="max_length",
            return_tensors="pt",
        )
    )
    with torch.inference_mode():
        reference = method.sample([model], padded)[:, 0].numpy()
    dynamic = method.batch_scorer(config, [model])(rows)[:, 0]
    assert np.abs(dynamic - reference).max() < 1e-5
    names = [*metrics.DEFAULT_METRICS, "ECE"]
    boards = [
        metrics.compute(frame_predictions(rows, p[:, None], True), names, drop_queries_without_relevant=True)
        for p in (dynamic, reference)
    ]
    assert {k: round(v, 4) for k, v in boards[0].items()} == {k: round(v, 4) for k, v in boards[1].items()}
