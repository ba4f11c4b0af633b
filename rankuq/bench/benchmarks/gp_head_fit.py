"""Does a GP head learn? One head trained in process as a grid trains a member (balanced pairs, AdamW,
warm-up, the method's loss and parameter groups), then ranked on the test lists by its predictive
mean: the quick loop behind sngp's and pg_gp's defaults (issue 47; their docstrings quote it).

The lists come from a run directory of gp.yaml (its ``cache/``: a task's train and test lists as the
grid built them, ClariQ or SemEval), so no list is built here; run ``rankuq run rankuq/bench/grids/gp.yaml
--run-dir DIR`` (or a grid with that task's in-domain condition alone) first. The training pairs are
the grid's: ClariQ's top BM25 negatives, SemEval's random ones (gp.yaml since 2026-11-30, as 003/004).
One thread by default, so two heads run side by side. The test R@1 after every epoch is printed as a
diagnosis of how fast the head learns (no epoch is chosen on it).

    python -m rankuq.bench.benchmarks.gp_head_fit DIR sngp '{"head_lr": 0.03}' [--task clariq]
        [--epochs 2] [--lr 5e-5] [--batch 8] [--max-queries 200] [--max-length 48] [--seed 0]
        [--threads 1]

``bert`` in place of a head trains the deterministic reference on the same pairs and lists.
"""

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch

from rankuq import methods
from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.training_loop import TrainState, balanced_pairs, fine_tune
from rankuq.bench.rundir.layout import RunLayout
from rankuq.contract import read_shards
from rankuq.methods.base import NeuralMethod
from rankuq.methods.gp import GPMethod

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

MAX_LENGTH, BATCH, MAX_QUERIES = 48, 8, 200  # gp.yaml's recipe
TASKS = ("clariq", "semeval")  # gp.yaml's in-domain conditions


def recall_at_1(test: pd.DataFrame, scores: np.ndarray) -> float:
    ranked = test.assign(score=scores).sort_values(["qid", "score"], ascending=[True, False])
    return float(ranked.groupby("qid").label.first().mean())


def ranked_recall(
    method: NeuralMethod,
    model: torch.nn.Module,
    tokenizer: "PreTrainedTokenizerBase",
    test: pd.DataFrame,
    max_length: int,
) -> float:
    """R@1 on the test lists of a head's predictive mean (bert: its probability)."""
    model.eval()
    means = []
    with torch.no_grad():
        for start in range(0, len(test), 64):
            rows = test.iloc[start : start + 64]
            inputs = encode_pairs(tokenizer, list(rows.context), list(rows.text), max_length)
            if isinstance(method, GPMethod):
                means.append(method.predictive([model], inputs)[0])
            else:
                means.append(method.sample([model], inputs)[:, 0])
    model.train()
    return recall_at_1(test, torch.cat(means).numpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("method", choices=["sngp", "gpf", "pg_gp", "bert"])
    parser.add_argument("params", nargs="?", default="{}", help="the method's parameters as JSON")
    parser.add_argument("--task", choices=TASKS, default="clariq")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--max-queries", type=int, default=MAX_QUERIES)
    parser.add_argument("--max-length", type=int, default=MAX_LENGTH)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    params = json.loads(args.params)
    config = ModelConfig(max_length=args.max_length)
    tokenizer = load_tokenizer(config)
    layout = RunLayout(args.run_dir)
    train = read_shards(layout.cached_lists(args.task, "train"))
    pairs = balanced_pairs(train, args.seed, args.max_queries, 1)
    test = read_shards(layout.cached_lists(args.task, "test")).to_pandas()
    method = methods.create(args.method, params, "gp_head_fit")
    assert isinstance(method, NeuralMethod)
    model = method.build_model(config, args.seed)
    started = time.time()
    by_epoch: list[float] = []

    def after_epoch(state: TrainState) -> None:
        by_epoch.append(round(ranked_recall(method, model, tokenizer, test, args.max_length), 3))
        print(f"epoch {state['epoch']}: loss {np.mean(state['losses'][-20:]):.3f}, test R@1 {by_epoch[-1]}")

    losses = fine_tune(
        model,
        tokenizer,
        pairs,
        config,
        TrainConfig(batch_size=args.batch, lr=args.lr, epochs=args.epochs),
        args.seed,
        loss_fn=method.loss,
        on_epoch_start=lambda: method.on_epoch_start(model),
        parameter_groups=method.parameter_groups(model),
        on_epoch_end=after_epoch,
        refit=method.epoch_refit(model),
    )
    figures = {
        "method": args.method,
        "params": params,
        "task": args.task,
        "lr": args.lr,
        "batch": args.batch,
        "max_queries": args.max_queries,
        "max_length": args.max_length,
        "epochs": args.epochs,
        "steps": len(losses),
        "loss_first_20": round(float(np.mean(losses[:20])), 3),
        "loss_last_20": round(float(np.mean(losses[-20:])), 3),
        "test_R@1_by_mean": by_epoch[-1],
        "test_R@1_by_epoch": by_epoch,
        "test_queries": int(test.qid.nunique()),
        "seconds": round(time.time() - started),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
