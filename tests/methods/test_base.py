"""What every neural method shares: rows scored in length buckets, the same as row by row."""

import numpy as np
import pandas as pd
import torch

from rankuq import methods
from rankuq.backbone import build_cross_encoder
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
