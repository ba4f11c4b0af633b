"""Does a GP head learn? One head trained in process as a grid trains a member (balanced pairs, AdamW,
warm-up, the method's loss and parameter groups), then ranked on the test lists by its predictive
mean: the quick loop behind sngp's and pg_gp's defaults (issue 47; their docstrings quote it).

The lists come from a run directory of gp.yaml (its ``cache/``: ClariQ's train and test lists as the
grid built them), so no list is built here; run ``rankuq run rankuq/bench/grids/gp.yaml --run-dir DIR`` (or a
grid with its ClariQ condition alone) first. One thread by default, so two heads run side by side.

    python -m rankuq.bench.benchmarks.gp_head_fit DIR sngp '{"head_lr": 0.03}' [--epochs 2]
        [--lr 5e-5] [--seed 0] [--threads 1]
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import torch

from rankuq import methods
from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.training_loop import balanced_pairs, fine_tune
from rankuq.methods.gp import GPMethod

MAX_LENGTH, BATCH, MAX_QUERIES = 48, 8, 200  # gp.yaml's recipe


def lists(run_dir: Path, split: str) -> Path:
    folders = sorted((run_dir / "cache").glob(f"clariq-{split}-*"))
    if len(folders) != 1:
        raise SystemExit(
            f"{run_dir}/cache holds {len(folders)} clariq-{split}-* lists, not one: run gp.yaml into it"
        )
    return folders[0] / "part-00000.parquet"


def recall_at_1(test: pd.DataFrame, scores: np.ndarray) -> float:
    ranked = test.assign(score=scores).sort_values(["qid", "score"], ascending=[True, False])
    return float(ranked.groupby("qid").label.first().mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("method", choices=["sngp", "gpf", "pg_gp"])
    parser.add_argument("params", nargs="?", default="{}", help="the method's parameters as JSON")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = ModelConfig(max_length=MAX_LENGTH)
    tokenizer = load_tokenizer(config)
    pairs = balanced_pairs(pq.read_table(lists(args.run_dir, "train")), args.seed, MAX_QUERIES, 1)
    test = pq.read_table(lists(args.run_dir, "test")).to_pandas()
    method = methods.create(args.method, json.loads(args.params), "gp_head_fit")
    assert isinstance(method, GPMethod)
    model = method.build_model(config, args.seed)
    started = time.time()
    losses = fine_tune(
        model,
        tokenizer,
        pairs,
        config,
        TrainConfig(batch_size=BATCH, lr=args.lr, epochs=args.epochs),
        args.seed,
        loss_fn=method.loss,
        on_epoch_start=lambda: method.on_epoch_start(model),
        parameter_groups=method.parameter_groups(model),
    )
    means = []
    with torch.no_grad():
        for start in range(0, len(test), 64):
            rows = test.iloc[start : start + 64]
            inputs = encode_pairs(tokenizer, list(rows.context), list(rows.text), MAX_LENGTH)
            means.append(method.predictive([model], inputs)[0])
    figures = {
        "method": args.method,
        "params": json.loads(args.params),
        "epochs": args.epochs,
        "steps": len(losses),
        "loss_first_20": round(float(np.mean(losses[:20])), 3),
        "loss_last_20": round(float(np.mean(losses[-20:])), 3),
        "test_R@1_by_mean": round(recall_at_1(test, torch.cat(means).numpy()), 3),
        "test_queries": int(test.qid.nunique()),
        "seconds": round(time.time() - started),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
