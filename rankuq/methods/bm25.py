"""`bm25`: a lexical baseline (bm25s over the split's candidate texts); scores are not probabilities."""

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from rankuq.backbone import ModelConfig
from rankuq.contract import shard_files
from rankuq.lexical import BM25Index
from rankuq.methods.base import REGISTRY, BatchScorer, Fitted, Method


@REGISTRY.register
class BM25(Method):
    name = "bm25"
    description = "BM25 baseline (bm25s; IDF over the split's candidates, context as query), S = 1"
    trains = False
    probabilistic = False

    def make_scorer(
        self, model: ModelConfig, checkpoints: Sequence[Path], shards: Path, fitted: Fitted | None = None
    ) -> BatchScorer:
        texts = pq.ParquetDataset(shard_files(shards)).read(columns=["text"]).column("text")
        corpus = sorted(set(texts.to_pylist()))
        row_of = {text: row for row, text in enumerate(corpus)}
        index = BM25Index(corpus)

        def score(batch: pd.DataFrame) -> np.ndarray:
            out = np.zeros(len(batch), dtype=np.float32)
            queries = [" ".join(turns) for turns in batch["context"]]
            for query, rows in pd.Series(range(len(batch))).groupby(queries):
                scores = index.scores(str(query))
                out[rows.to_numpy()] = scores[[row_of[t] for t in batch["text"].iloc[rows]]]
            return out[:, None]

        return score
