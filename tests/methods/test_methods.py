import re
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.errors import RankuqError
from rankuq.methods.base import NeuralMethod, length_buckets

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)
BATCH = pd.DataFrame(
    {
        "qid": ["q1", "q1", "q2"],
        "context": [["who wrote hamlet"], ["who wrote hamlet"], ["how tall is everest"]],
        "cid": ["a", "b", "c"],
        "text": ["hamlet was written by shakespeare", "paris is in france", "everest is 8849 m tall"],
        "label": [1, 0, 1],
    }
)


@pytest.fixture(scope="module")
def inputs() -> dict[str, torch.Tensor]:
    return encode_pairs(load_tokenizer(TINY_MODEL), list(BATCH.context), list(BATCH.text), 32)


def draws(name: str, raw: dict, members: int, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    method = methods.create(name, raw, "test")
    assert isinstance(method, NeuralMethod)
    models = [build_cross_encoder(TINY_MODEL, seed) for seed in range(members)]
    with torch.inference_mode():
        return method.sample(models, inputs)


def test_registry_lists_every_method_and_rejects_unknown_names():
    assert {"bert", "mc_dropout", "ensemble", "bm25"} <= set(methods.names())
    with pytest.raises(RankuqError, match="unknown method 'sngpp'; valid methods: bert, bm25"):
        methods.get("sngpp")


def test_bert_is_deterministic_with_one_sample(inputs):
    first, second = draws("bert", {}, 1, inputs), draws("bert", {}, 1, inputs)
    assert first.shape == (3, 1)
    assert torch.equal(first, second)
    assert ((first > 0) & (first < 1)).all()


def test_mc_dropout_samples_t_passes(inputs):
    method = methods.create("mc_dropout", {"T": 7})
    model = build_cross_encoder(TINY_MODEL.model_copy(update={"dropout": 0.3}), 0)
    calls = []
    model.register_forward_hook(lambda module, args, kwargs, out: calls.append(1), with_kwargs=True)
    with torch.inference_mode():
        samples = method.sample([model], inputs)
    assert samples.shape == (3, 7)
    assert len(calls) == 7  # one pass over the batch per draw
    assert (samples.var(dim=1) > 0).all()


def test_ensemble_stacks_members(inputs):
    samples = draws("ensemble", {"M": 3}, 3, inputs)
    assert samples.shape == (3, 3)
    assert (samples.var(dim=1) > 0).all()  # differently seeded heads disagree


@pytest.mark.parametrize(
    ("name", "raw", "match"),
    [
        ("mc_dropout", {"T": 0}, r"methods.mc_dropout.T: Input should be greater than 0"),
        ("mc_dropout", {"T": -3}, r"methods.mc_dropout.T: Input should be greater than 0"),
        ("ensemble", {"M": 1}, r"methods.ensemble.M: Input should be greater than or equal to 2"),
        ("bert", {"T": 3}, r"methods.bert.T: Extra inputs are not permitted"),
    ],
)
def test_bad_parameters_are_one_clear_error(name, raw, match):
    with pytest.raises(RankuqError, match=match):
        methods.create(name, raw, "grid.yaml: methods." + name)


def test_ensemble_trains_m_members():
    assert methods.create("ensemble", {"M": 4}).members() == 4
    assert methods.create("bert").members() == 1


def test_offline_minilm_truncates_to_l_layers():
    model = build_cross_encoder(ModelConfig(layers=2), seed=0)
    assert model.config.num_hidden_layers == 2
    assert len(model.bert.encoder.layer) == 2
    assert model.config.num_labels == 2


def test_missing_backbone_folder_is_a_clear_error(tmp_path):
    with pytest.raises(RankuqError, match=r"model\.backbone"):
        build_cross_encoder(ModelConfig(backbone=str(tmp_path / "nowhere")), seed=0)


def test_bm25_ranks_the_overlapping_candidate_first(tmp_path):
    pq.write_table(pa.Table.from_pandas(BATCH[["text"]]), tmp_path / "part-00000.parquet")
    method = methods.create("bm25")
    score = method.make_scorer(TINY_MODEL, [], tmp_path)
    scores = score(BATCH)
    assert scores.shape == (3, 1)
    assert scores[0, 0] > scores[1, 0]
    assert not method.probabilistic and not method.trains
    assert np.isfinite(scores).all()


def test_length_buckets_sort_rows_and_cut_each_chunk_to_its_longest_row():
    mask = torch.tensor([[1, 1, 1], [1, 0, 0], [1, 1, 0]])
    chunks = list(length_buckets({"attention_mask": mask, "input_ids": mask * 7}, size=2))
    assert [rows.tolist() for rows, _ in chunks] == [[1, 2], [0]]
    assert chunks[0][1]["input_ids"].tolist() == [[7, 0], [7, 7]]
    assert chunks[1][1]["attention_mask"].shape == (1, 3)


def test_a_bucketed_scorer_call_equals_scoring_row_by_row(tmp_path):
    checkpoint = tmp_path / "member"
    methods.create("bert").save_member(build_cross_encoder(TINY_MODEL, seed=0), TINY_MODEL, checkpoint)
    score = methods.create("bert").make_scorer(TINY_MODEL, [checkpoint], tmp_path)
    rows = pd.concat([BATCH] * 30, ignore_index=True)  # 90 rows: two buckets of 64 and 26
    rows["text"] = [text + " word" * (i % 7) for i, text in enumerate(rows.text)]
    alone = np.concatenate([score(rows.iloc[[i]]) for i in range(len(rows))])
    np.testing.assert_allclose(score(rows), alone, atol=1e-6)


def test_method_descriptions_and_docstrings_cite_by_author_and_year():
    """Papers are cited as "Penha & Hauff, 2021", never by the project's internal file numbers."""
    internal = re.compile(r"\[0\d\d\b|\bpapers? 0\d\d\b|\b0\d\d §")
    for name in methods.names():
        method = methods.get(name)
        module = sys.modules[method.__module__]
        for text in (method.description, method.__doc__ or "", module.__doc__ or ""):
            assert not internal.search(text), (name, text)
    assert "[Penha & Hauff, 2021]" in methods.get("mc_dropout").description
