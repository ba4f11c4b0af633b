"""Model fit (issue 15): `bert` fine-tuned on WikiQA's native training lists, against BM25, on the
WikiQA test lists (native; questions without a correct sentence left out, as in Yang et al., 2015).

Training as the grid trains a member (``bench.engine.training_loop.fine_tune``: balanced pointwise
cross-entropy, AdamW, linear warm-up), on every relevant sentence plus ``--negatives`` non-relevant
ones from its list.
After each epoch the test lists are scored and AP, R@1 and nDCG@10 printed with the paired t-test
over queries against BM25 (bm25s over the test split's sentences, the `bm25` method). The epochs are
fixed beforehand: the per-epoch lines show the curve, not a choice made on test.

    python -m rankuq.bench.benchmarks.model_fit [--layers 6] [--max-length 128] [--negatives 4]
        [--epochs 3] [--lr 5e-5] [--threads 2]
"""

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from scipy.stats import ttest_rel

from rankuq import methods, tasks
from rankuq.backbone import ModelConfig, load_tokenizer
from rankuq.bench import metrics
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.scoring import SCORED_COLUMNS, score_frame
from rankuq.bench.engine.training_loop import TrainState, balanced_pairs, fine_tune
from rankuq.methods.base import NeuralMethod

MEASURES = ["AP", "R@1", "nDCG@10"]


def per_query(table: pa.Table) -> dict[str, np.ndarray]:
    return metrics.per_query(table, MEASURES, drop_queries_without_relevant=True)[1]


def bm25_table(test: pa.Table) -> pa.Table:
    """BM25's predictions of the test lists (its IDF over the split's sentences, as in a grid)."""
    with tempfile.TemporaryDirectory() as folder:
        pq.write_table(test, Path(folder) / "part-00000.parquet")
        score = methods.create("bm25", {}).make_scorer(ModelConfig(), [], Path(folder))
        return score_frame(score, test.select(SCORED_COLUMNS).to_pandas(), 4096, False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=6, help="MiniLM layers kept (6: the whole model)")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--negatives", type=int, default=4, help="non-relevant pairs per relevant one")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = ModelConfig(layers=None if args.layers == 6 else args.layers, max_length=args.max_length)
    task, root = tasks.get("wikiqa")(), tasks.data_root()
    test = task.load("test", root)
    pairs = balanced_pairs(task.load("train", root), 0, negatives=args.negatives)
    baseline = per_query(bm25_table(test))
    method = methods.create("bert", {})
    assert isinstance(method, NeuralMethod)
    model = method.build_model(config, 0)
    score = method.batch_scorer(config, [model])
    print(json.dumps({**vars(args), "pairs": len(pairs), "load_average": os.getloadavg()[0]}), flush=True)
    print(
        json.dumps({"method": "bm25", **{m: round(float(v.mean()), 4) for m, v in baseline.items()}}),
        flush=True,
    )
    start = time.time()

    def report(state: TrainState) -> None:
        scored = time.time()
        with torch.random.fork_rng():
            ours = per_query(score_frame(score, test.select(SCORED_COLUMNS).to_pandas(), 256, True))
        line = {"method": "bert", "epoch": state["epoch"], "train_s": round(scored - start)}
        line["score_s"] = round(time.time() - scored)
        for name, values in ours.items():
            line[name] = round(float(values.mean()), 4)
            line[f"p_{name}"] = float(ttest_rel(values, baseline[name]).pvalue)
        print(json.dumps(line | {"load_average": os.getloadavg()[0]}), flush=True)

    train = TrainConfig(epochs=args.epochs, batch_size=16, lr=args.lr)
    fine_tune(model, load_tokenizer(config), pairs, config, train, 0, on_epoch_end=report)


if __name__ == "__main__":
    main()
