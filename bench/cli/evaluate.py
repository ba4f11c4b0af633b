"""``rankuq evaluate``: black-box evaluation of a run file or predictions table."""

import argparse
import json
import re
from pathlib import Path

from rankuq.bench.cli.common import EVALUATE_PROBES, _print_table
from rankuq.errors import RankuqError

FILE_OPTIONS = ("--run", "--qrels", "--predictions", "--dev", "--dev-run", "--dev-qrels", "--write-run")


def _evaluate(args: argparse.Namespace) -> None:
    from rankuq.bench.evaluation.blackbox import evaluate_inputs, per_query_values, read_dev, read_inputs
    from rankuq.bench.evaluation.trec import write_trec_run
    from rankuq.bench.preflight.paths import check_input_file

    if args.model is not None or args.task is not None:
        _zero_shot(args)
        return
    for option in FILE_OPTIONS:  # before any is opened: a FIFO with no writer would block for ever
        path = getattr(args, option.removeprefix("--").replace("-", "_"))
        if path is not None:
            check_input_file(path, option)
    probes = [probe for probe in EVALUATE_PROBES if getattr(args, probe)]
    evaluated = read_inputs(
        run=args.run,
        qrels=args.qrels,
        predictions=args.predictions,
        strict=args.strict,
        probabilities=args.probabilities,
    )
    dev = read_dev(args.dev, args.dev_run, args.dev_qrels, args.strict, args.probabilities, probes)
    values = evaluate_inputs(evaluated, args.metrics, probes, dev, args.seed, args.confidences)
    queries = per_query_values(evaluated, args.metrics) if args.by_query else None
    if args.write_run:
        write_trec_run(evaluated.table, args.write_run)
    if args.json:
        print(json.dumps(values if queries is None else {"per_query": queries, "all": values}))
        return
    if queries is not None:  # ir-measures' and trec_eval's -q lines: qid, measure, value
        for qid, row in queries.items():
            print("\n".join(f"{qid}\t{name}\t{value:.4f}" for name, value in row.items()))
    _print_table("evaluation", ["metric", "value"], [[k, f"{v:.4f}"] for k, v in values.items()])


def _zero_shot(args: argparse.Namespace) -> None:
    """``--model DIR --task T``: the checkpoint scored as it is by a one-task grid (train.epochs 0)."""
    from rankuq.bench.cli.run import _show
    from rankuq.bench.config.grid import parse_grid
    from rankuq.bench.preflight.backbone_folder import check_backbone
    from rankuq.bench.preflight.paths import check_output_folder
    from rankuq.bench.results.boards import read_run_dir
    from rankuq.bench.run.runner import run_grid

    if args.model is None or args.task is None or args.run or args.predictions:
        raise RankuqError(
            "zero-shot evaluation takes --model DIR and --task NAME (and no --run or --predictions)"
        )
    if not args.model.is_dir():
        raise RankuqError(f"--model {args.model}: no such folder; give a cross-encoder checkpoint folder")
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", f"zero-shot-{args.model.resolve().name}-{args.task}")
    grid = {
        "name": name,
        "tasks": [args.task],
        "methods": {method: {} for method in args.methods},
        "model": {"backbone": str(args.model.resolve())},
        "train": {"epochs": 0},
    }
    spec, params = parse_grid(grid, f"--model {args.model}")
    check_backbone(spec.model)
    run_dir = args.run_dir or Path("runs") / name
    check_output_folder(run_dir, "--run-dir")
    run_grid(spec, params, run_dir)
    board = read_run_dir(run_dir)
    if args.json:
        print(board.table.to_json(orient="records"))
        return
    _show(board)
    print(f"written: leaderboard.md, .csv and report.html in {run_dir}")
