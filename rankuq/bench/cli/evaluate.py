"""``rankuq evaluate``: black-box evaluation of a TREC run file or predictions table."""

import argparse
import hashlib
import json
import re
import sys
from typing import TYPE_CHECKING

from rankuq.bench.cli.common import EVALUATE_PROBES, print_table
from rankuq.errors import RankuqError

if TYPE_CHECKING:
    import pandas as pd

MAX_NAME = 100  # a grid name's longest (bench.config.grid's plain names)
RERANK_DEPTH = 100  # BEIR's reranking depth (Thakur et al., 2021, §5: BM25's top 100)
# The options of zero-shot evaluation (--model, --task) alone.
MODEL_OPTIONS = (
    *("--max-length", "--protocol", "--ns", "--n", "--split", "--data-dir", "--seeds", "--plan", "--run-dir"),
)
# The file options of black-box evaluation → their dest (bench.cli.parser): TREC runs are trec_run.
FILE_OPTIONS = {
    "--run": "trec_run",
    "--qrels": "qrels",
    "--predictions": "predictions",
    "--dev": "dev",
    "--dev-run": "dev_trec_run",
    "--dev-qrels": "dev_qrels",
    "--write-run": "write_trec_run",
}


def evaluate_command(args: argparse.Namespace) -> None:
    from rankuq.bench.evaluation.blackbox import evaluate_inputs, per_query_values, read_dev, read_inputs
    from rankuq.bench.evaluation.trec import write_trec_run
    from rankuq.bench.preflight.paths import check_input_file

    if args.model is not None or args.task is not None:
        _zero_shot(args)
        return
    if args.trec_run is None and args.qrels is None and args.predictions is None:
        raise RankuqError(
            "evaluate a TREC run with its qrels (--run RUN --qrels QRELS), a predictions file "
            "(--predictions FILE.parquet) or a cross-encoder checkpoint on a task (--model DIR --task NAME)"
        )
    given = [name for name in MODEL_OPTIONS if getattr(args, name.removeprefix("--").replace("-", "_"))]
    if given:
        raise RankuqError(f"{given[0]} applies to a model scored on a task: give --model DIR --task NAME")
    # Each checked before any is opened: a FIFO with no writer would block for ever.
    for option, dest in FILE_OPTIONS.items():
        path = getattr(args, dest)
        if path is not None:
            check_input_file(path, option)
    probes = [probe for probe in EVALUATE_PROBES if getattr(args, probe)]
    evaluated = read_inputs(
        trec_run=args.trec_run,
        qrels=args.qrels,
        predictions=args.predictions,
        strict=args.strict,
        probabilities=args.probabilities,
    )
    dev = read_dev(args.dev, args.dev_trec_run, args.dev_qrels, args.strict, args.probabilities, probes)
    values = evaluate_inputs(evaluated, args.metrics, probes, dev, args.seed, args.confidences)
    queries = per_query_values(evaluated, args.metrics) if args.by_query else None
    if args.write_trec_run:
        write_trec_run(evaluated.table, args.write_trec_run)
    if args.json:
        print(json.dumps(values if queries is None else {"per_query": queries, "all": values}))
        return
    if queries is not None:  # ir-measures' and trec_eval's -q lines: qid, measure, value
        for qid, row in queries.items():
            print("\n".join(f"{qid}\t{name}\t{value:.4f}" for name, value in row.items()))
    print_table("evaluation", ["metric", "value"], [[k, f"{v:.4f}"] for k, v in values.items()])


def _zero_shot(args: argparse.Namespace) -> None:
    """``--model DIR --task T``: the checkpoint scored as it is by a one-task grid (train.epochs 0),
    its inputs cut at the checkpoint's own maximum length unless ``--max-length`` says otherwise."""
    from rankuq.bench.preflight.backbone_folder import locate_backbone
    from rankuq.bench.preflight.checkpoint import LONGEST, SHORTEST, check_saved_head

    if args.model is None or args.task is None or args.trec_run or args.predictions:
        raise RankuqError(
            "zero-shot evaluation takes --model DIR and --task NAME (and no --run or --predictions)"
        )
    if not args.model.is_dir():
        raise RankuqError(f"--model {args.model}: no such folder; give a cross-encoder checkpoint folder")
    if args.max_length is not None and not SHORTEST <= args.max_length <= LONGEST:
        raise RankuqError(f"--max-length {args.max_length}: give {SHORTEST} to {LONGEST} tokens")
    if args.n is not None and args.n < 2:  # 0 was taken as the default 10 (the grid checks the most)
        raise RankuqError(f"--n {args.n}: a list needs 2 or more candidates, e.g. --n 10")
    # Its files (weights whole) and head, before the grid's imports (torch: seconds on a loaded machine).
    locate_backbone(str(args.model))
    check_saved_head(args.model, f"model.backbone {args.model}")

    from rankuq import tasks
    from rankuq.bench.cli.boards import show_board
    from rankuq.bench.planning.summary import describe
    from rankuq.bench.preflight.checkpoint import own_max_length
    from rankuq.bench.results.boards import read_run_dir
    from rankuq.bench.run.grid_run import GridRequest, grid_run, plan_grid

    if args.max_length is not None:
        length, source = args.max_length, "--max-length"
    else:
        length, source = own_max_length(args.model)
    splits = tasks.get(args.task)().available_splits(tasks.data_root(args.data_dir))
    dev = "dev" in splits and args.split != "dev"
    if not dev:
        _check_fits(args)
    grid = zero_shot_grid(args, length, dev)
    request = GridRequest(grid, args.run_dir, source=f"--model {args.model}", holder=args.command_line)
    said = sys.stderr if args.json else sys.stdout  # --json: stdout holds the one JSON object
    print(f"max length: {length} tokens ({source})", file=said)
    protocol = {"protocol": protocol_of(args), "measured": describe_protocol(zero_shot_side(args))}
    print(f"protocol: {protocol['measured']}", file=said)
    planned = plan_grid(request)  # shown before the long work, then run as it is
    if args.plan and args.json:
        lines = describe(planned).splitlines()
        print(
            json.dumps(
                {"max_length": length, "max_length_from": source} | protocol | {"grid": grid, "plan": lines}
            )
        )
        return
    print(describe(planned), file=sys.stdout if args.plan else said)
    if args.plan:
        return
    run_dir = grid_run(request, planned=planned).layout.root
    board = read_run_dir(run_dir)
    if args.json:
        print(board_json(board.table))
        return
    show_board(board)
    print(f"written: leaderboard.md, .csv and report.html in {run_dir}, beside the MLflow store")
    from rankuq.bench.results.tracking import experiment_page
    from rankuq.bench.rundir.layout import RunLayout

    page = experiment_page(RunLayout(run_dir).default_tracking_uri)
    if page:
        print(f"MLflow: {page}")


def _check_fits(args: argparse.Namespace) -> None:
    """A method fitted on held-out judgments (temperature scaling) needs a dev split the tested
    one is not: said before any work, in the folder's terms."""
    from rankuq import methods

    fitted = [name for name in args.methods if methods.get(name).posthoc]
    if fitted:
        where = "other queries' judgments in qrels/dev.tsv beside qrels/test.tsv"
        raise RankuqError(
            f"--methods {fitted[0]}: it is fitted on a dev split's judgments, and {args.task} has none "
            f"apart from the split scored; add {where} (the probes then fit there too), or leave "
            f"{', '.join(fitted)} out (bert and mc_dropout need no fit)"
        )


def board_json(table: "pd.DataFrame") -> str:
    """A board's rows as JSON records; a row of one seed has no spread: its stds are null, not 0.0."""
    import pandas as pd

    single = pd.to_numeric(table.seeds, errors="coerce") <= 1
    stds = [column for column in table.columns if column.endswith(" std")]
    return table.assign(**{column: table[column].mask(single) for column in stds}).to_json(orient="records")


def protocol_of(args: argparse.Namespace) -> str:
    """``--protocol``, or its default: rerank a BEIR folder's retrieved documents (what its users
    compare with), the papers' lists for the other tasks."""
    return args.protocol or ("rerank" if args.task.startswith("beir/") else "lists")


def describe_protocol(side: dict[str, object]) -> str:
    """What the numbers of a zero-shot condition whose test side is ``side`` are measured on."""
    if side.get("variant") == "retrieved":
        return (
            f"rerank: the top {side['n']} of {side['ns']} over the whole corpus as retrieved (no relevant "
            "document put in), measured against the split's full qrels, as BEIR and MTEB report"
        )
    return (
        f"lists: {side.get('n') or 'the'} candidates a query with its relevant ones put in "
        "(the papers' lists), measured on the lists' own labels; --protocol rerank for BEIR's numbers"
    )


def zero_shot_side(args: argparse.Namespace) -> dict[str, object]:
    """The lists ``evaluate --model`` scores (``--protocol``, ``--ns``, ``--n``) as a grid's side."""
    side: dict[str, object] = {"task": args.task} | {
        key: getattr(args, key) for key in ("ns", "n") if getattr(args, key) is not None
    }
    if protocol_of(args) == "lists":
        return side
    return {
        "task": args.task,
        "ns": side.get("ns", "bm25"),
        "n": side.get("n", RERANK_DEPTH),
        "variant": "retrieved",
    }


def zero_shot_grid(args: argparse.Namespace, max_length: int, dev: bool) -> dict[str, object]:
    """The one-condition grid ``evaluate --model`` runs: the checkpoint as given on ``--task``'s
    lists (``--protocol``, ``--ns``, ``--n``, ``--split``), the probes fitted on its dev split where
    it has one (``dev``; else on a held-out part of the tested split, as for a test-only BEIR folder)."""
    from rankuq.bench.config.grid import condition_name

    side = zero_shot_side(args)
    baseline = [] if args.baseline == "none" else [args.baseline]
    label = "-".join(str(value) for value in side.values())
    condition: dict[str, object] = (
        {"tasks": [args.task]}
        if len(side) == 1
        else {"shifts": [{"name": condition_name(label), "train": side, "test": side}]}
    )
    return {
        "name": short_name(f"zero-shot-{args.model.resolve().name}-{label}"),
        "data_dir": args.data_dir,
        **condition,
        "methods": {method: {} for method in [*args.methods, *baseline]},
        "baseline": baseline[0] if baseline else None,
        "seeds": args.seeds or [0],
        "model": {"backbone": str(args.model.resolve()), "max_length": max_length},
        "train": {"epochs": 0},
        "eval": {"split": args.split or "test", "dev_split": "dev" if dev else None},
    }


def short_name(text: str) -> str:
    """``text`` as a grid name (a folder and an MLflow run): what a name cannot hold turned into '-',
    and a name over the 100 characters allowed cut, with a hash of the whole kept distinct."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", text)
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - len(digest) - 1]}-{digest}"
