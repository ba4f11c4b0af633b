"""`bm25`: a lexical baseline (bm25s over the split's candidate texts); scores are not probabilities."""

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from rankuq.backbone import ModelConfig
from rankuq.contract import shard_files
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
        # Imported here, not at the top: bm25s imports JAX where it is installed and starts its backend
        # (threads, fork warnings), which `rankuq run` must not pay unless a grid scores bm25.
        import bm25s

        texts = pq.ParquetDataset(shard_files(shards)).read(columns=["text"]).column("text")
        corpus = sorted(set(texts.to_pylist()))
        row_of = {text: row for row, text in enumerate(corpus)}
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(corpus, show_progress=False), show_progress=False)

        def score(batch: pd.DataFrame) -> np.ndarray:
            out = np.zeros(len(batch), dtype=np.float32)
            queries = [" ".join(turns) for turns in batch["context"]]
            for query, rows in pd.Series(range(len(batch))).groupby(queries):
                tokens = bm25s.tokenize([query], return_ids=False, show_progress=False)[0]
                if tokens:  # a query of stop words only scores 0 everywhere
                    scores = retriever.get_scores(tokens)
                    out[rows.to_numpy()] = scores[[row_of[t] for t in batch["text"].iloc[rows]]]
            return out[:, None]

        return score
