"""`bm25`: a lexical ranker over the scored lists' texts, scores that are not probabilities."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig

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


def test_bm25_ranks_the_overlapping_candidate_first(tmp_path):
    pq.write_table(pa.Table.from_pandas(BATCH[["text"]]), tmp_path / "part-00000.parquet")
    method = methods.create("bm25")
    score = method.make_scorer(TINY_MODEL, [], tmp_path)
    scores = score(BATCH)
    assert scores.shape == (3, 1)
    assert scores[0, 0] > scores[1, 0]
    assert not method.probabilistic and not method.trains
    assert np.isfinite(scores).all()
