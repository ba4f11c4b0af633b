"""`bm25`: a lexical ranker over the scored lists' texts, scores that are not probabilities."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq import methods


def test_bm25_ranks_the_overlapping_candidate_first(tmp_path, tiny_model, batch):
    pq.write_table(pa.Table.from_pandas(batch[["text"]]), tmp_path / "part-00000.parquet")
    method = methods.create("bm25")
    score = method.make_scorer(tiny_model, [], tmp_path)
    scores = score(batch)
    assert scores.shape == (3, 1)
    assert scores[0, 0] > scores[1, 0]
    assert not method.probabilistic and not method.trains
    assert np.isfinite(scores).all()
