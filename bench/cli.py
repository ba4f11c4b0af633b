"""The `rankuq` command: run a grid, list the registries, evaluate a black-box run, report a grid."""

import argparse
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from rankuq import __version__
from rankuq.errors import RankuqError

if TYPE_CHECKING:
    from rankuq.bench.leaderboard import Board

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C
EXIT_TERMINATED = 143  # ... and by SIGTERM (what `timeout`, schedulers and `kill` send)
EVALUATE_PROBES = ("calibration", "risk", "abstention", "nota", "cutoff")  # keys: bench.evaluate


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rankuq", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rankuq {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a method × task × seed grid (default: the built-in grid)")
    run.add_argument("grid", nargs="?", type=Path, help="grid YAML file (default: built-in WikiQA grid)")
    run.add_argument("--run-dir", type=Path, help="where models, predictions, MLflow and the leaderboard go")
    run.add_argument("--data-dir", help="the shared data folder (default: $RANKUQ_DATA or ../shared/data)")
    run.add_argument("--address", help="Ray cluster address, e.g. 'auto' on a cluster head")
    run.add_argument("--tracking-uri", help="MLflow tracking URI (default: sqlite file in the run dir)")
    run.add_argument("--experiment", help="MLflow experiment (default: $MLFLOW_EXPERIMENT_NAME or rankuq)")
    run.add_argument(
        "--backbone",
        type=Path,
        help="checkpoint folder to fine-tune instead of the grid's model.backbone (e.g. a member of an "
        "earlier run, RUN_DIR/models/<key>)",
    )
    run.add_argument(
        "--plan",
        action="store_true",
        help="print what the grid would train, score and probe, and its cost; run nothing",
    )

    commands.add_parser("tasks", help="list the registered tasks")
    commands.add_parser("methods", help="list the registered methods")

    evaluate = commands.add_parser("evaluate", help="score a TREC run or a predictions Parquet file")
    evaluate.add_argument("--run", type=Path, help="TREC run file (qid Q0 docno rank score tag)")
    evaluate.add_argument("--qrels", type=Path, help="TREC qrels file (qid 0 docno relevance)")
    evaluate.add_argument("--predictions", type=Path, help="predictions Parquet file (contract 2)")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    evaluate.add_argument(
        "--metrics",
        type=_names,
        help="comma-separated ir-measures names, e.g. AP,nDCG@10,P@5,R@100,RR,ECE "
        "(default: R@1,R@5,P@1,AP,RR,nDCG@10, and ECE,ECE.all for probabilities)",
    )
    evaluate.add_argument(
        "-q", "--by-query", action="store_true", help="each query's values too (ir-measures' iter_calc)"
    )
    evaluate.add_argument("--write-run", type=Path, help="write the scored candidates as a TREC run file")
    evaluate.add_argument(
        "--probabilities",
        action=argparse.BooleanOptionalAction,
        help="the scores are P(relevant) (ECE applies; checked to lie in [0, 1]); default: a TREC run's "
        "are not, a predictions file's as it records",
    )
    for probe in EVALUATE_PROBES:
        evaluate.add_argument(f"--{probe}", action="store_true", help=f"add the {probe} probe (bench.probes)")
    evaluate.add_argument(
        "--confidences",
        type=_names,
        help="the abstention probe's confidence functions, e.g. u_max,u_std,u_1-2 (reference-free ones "
        "alone are scored on the whole table; default: all that apply)",
    )
    evaluate.add_argument("--dev", type=Path, help="dev-split predictions Parquet: RA's b, abstention fits")
    evaluate.add_argument(
        "--dev-run", type=Path, help="dev-split TREC run (with --dev-qrels), instead of --dev"
    )
    evaluate.add_argument("--dev-qrels", type=Path, help="dev-split TREC qrels (with --dev-run)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the probes' splits and learners")
    evaluate.add_argument(
        "--strict",
        action="store_true",
        help="refuse a (qid, docno) listed twice instead of keeping its last line",
    )

    board = commands.add_parser(
        "leaderboard", help="print a grid's per-condition tables; write leaderboard.md and report.html"
    )
    board.add_argument("run_dir", nargs="?", type=Path, help="a run directory of `rankuq run`")
    board.add_argument("--tracking-uri", help="read the grid from this MLflow store instead")
    board.add_argument("--grid", help="with --tracking-uri: the grid's name (default: the newest grid)")
    board.add_argument("--experiment", help="with --tracking-uri: the MLflow experiment (default: rankuq)")
    board.add_argument("--out", type=Path, help="output folder (default: RUN_DIR, or reports/<grid name>)")
    board.add_argument("--latex", type=Path, help="also write the tables as LaTeX (booktabs) to this file")

    found = commands.add_parser(
        "findings", help="measure the papers' claims in finished paper-grid runs; write docs/findings.md"
    )
    found.add_argument("run_dirs", nargs="+", type=Path, help="run directories of the paper grids")
    found.add_argument("--out", type=Path, default=Path("docs/findings.md"), help="default: docs/findings.md")
    found.add_argument(
        "--cost", type=Path, help="method_cost's CSV of timed repeats (its --out): the inference-cost claims"
    )
    found.add_argument(
        "--allow-stale",
        action="store_true",
        help="write the findings even where a run's cells are not what this checkout makes (marked stale)",
    )
    return parser


def _names(text: str) -> list[str]:
    """A comma-separated option value as its names, blanks dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title)
    for column in header:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def _run(args: argparse.Namespace) -> None:
    from rankuq.bench.preflight import check_output_folder, check_ray_address, check_tracking_uri
    from rankuq.tasks import data_root

    # What was given, checked before the slow imports (Ray, torch, MLflow) and before any write.
    if args.grid is not None and not args.grid.is_file():
        raise RankuqError(f"grid file not found: {args.grid}")
    if args.data_dir:
        data_root(args.data_dir)
    if args.backbone is not None and not args.backbone.is_dir():
        raise RankuqError(
            f"--backbone {args.backbone}: no such folder; give a checkpoint folder (config.json, weights, "
            "tokenizer), such as a trained member RUN_DIR/models/<key>"
        )
    if args.run_dir:
        check_output_folder(args.run_dir, "--run-dir")
    check_ray_address(args.address)
    if args.tracking_uri:
        check_tracking_uri(args.tracking_uri)

    if args.plan:  # prints, writes nothing, starts nothing: no lock needed
        _run_grid(args, locked=True)
        return

    from rankuq.bench.files import run_dir_lock

    # A run directory that exists may be in use: find out at once, not after the imports; a new one
    # is created (and locked) only once the grid validated.
    early = args.run_dir is not None and args.run_dir.is_dir()
    with run_dir_lock(args.run_dir) if early else contextlib.nullcontext():
        _run_grid(args, locked=early)


def _run_grid(args: argparse.Namespace, locked: bool) -> None:
    from rankuq.bench.grid import load_grid
    from rankuq.bench.layout import RunLayout
    from rankuq.tasks import data_root

    spec, params = load_grid(args.grid)
    if args.data_dir:
        spec = spec.model_copy(update={"data_dir": args.data_dir})
    if args.backbone is not None:  # absolute: the members' keys do not depend on the working folder
        model = spec.model.model_copy(update={"backbone": str(args.backbone.resolve())})
        spec = spec.model_copy(update={"model": model})
    data_root(spec.data_dir)
    run_dir = args.run_dir or Path("runs") / spec.name
    if args.plan:  # before the engine's imports (Ray Train, Tune, Data; MLflow): seconds saved
        from rankuq.bench.cost import describe
        from rankuq.bench.plan import plan

        print(describe(plan(spec, params, RunLayout(run_dir))))
        return

    from rankuq.bench.files import removed_on_error, run_dir_lock
    from rankuq.bench.leaderboard import read_run_dir
    from rankuq.bench.leftovers import stop_recorded
    from rankuq.bench.preflight import check_output_folder
    from rankuq.bench.runner import build_lists, run_built

    check_output_folder(run_dir, "run directory")
    for noisy in ("ray", "ray.data", "ray.tune", "ray.train", "mlflow", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    layout = RunLayout(run_dir)
    with contextlib.ExitStack() as held:
        # Bad data rows fail while the lists are built: what this run made until then goes again.
        with removed_on_error(layout.root, layout.cache):
            if not locked:
                held.enter_context(run_dir_lock(run_dir))
            stop_recorded(layout.ray_pids)
            grid = build_lists(spec, params, layout)
        run_built(grid, args.tracking_uri, args.address, experiment=args.experiment)
    _show(read_run_dir(run_dir))
    print(f"written: leaderboard.md, .csv and report.html in {run_dir}, beside the MLflow store")


def _show(board: "Board") -> None:
    """The board's per-condition tables and their footnote, on the terminal."""
    from rankuq.bench.leaderboard import footnote, rich_tables

    console = Console()
    for table in rich_tables(board):
        console.print(table)
    console.print(footnote(board.table, changes=False))


def _evaluate(args: argparse.Namespace) -> None:
    from rankuq.bench.evaluate import evaluate_inputs, per_query_values, read_dev, read_inputs, write_trec_run

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


def _leaderboard(args: argparse.Namespace) -> None:
    from rankuq.bench.files import atomic_write
    from rankuq.bench.leaderboard import paper_latex, read_run_dir, read_tracking
    from rankuq.bench.report import write_report

    if (args.run_dir is None) == (args.tracking_uri is None) or (args.grid and args.run_dir):
        raise RankuqError("rankuq leaderboard: give either RUN_DIR or --tracking-uri URI [--grid NAME]")
    from rankuq.bench.preflight import check_output_folder, check_tracking_uri

    if args.tracking_uri:
        check_tracking_uri(args.tracking_uri)
    if args.out:
        check_output_folder(args.out, "--out")
    if args.latex:
        if args.latex.is_dir():
            raise RankuqError(f"--latex {args.latex} is a folder; give a file path such as tables.tex")
        check_output_folder(args.latex.parent, "--latex")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # plot downloads: no bars
    with tempfile.TemporaryDirectory() as downloads:  # the report embeds the plots: no need to keep them
        board = (
            read_run_dir(args.run_dir)
            if args.run_dir
            else read_tracking(args.tracking_uri, args.grid, Path(downloads), args.experiment)
        )
        _show(board)
        paths = write_report(board, args.out or args.run_dir or Path("reports") / board.name)
    if args.latex:
        args.latex.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(args.latex, paper_latex(board))
        paths = (*paths, args.latex)
    print(f"written: {', '.join(map(str, paths[:-1]))} and {paths[-1]}")


def _findings(args: argparse.Namespace) -> None:
    from rankuq.bench.findings import findings

    print(f"written: {findings(args.run_dirs, args.out, cost=args.cost, allow_stale=args.allow_stale)}")


def _list_tasks() -> None:
    from rankuq import tasks
    from rankuq.tasks import lists, negatives

    rows = [[name, task.description, ", ".join(task.files)] for name, task in _entries(tasks)]
    _print_table("tasks", ["name", "description", "files (under the data folder)"], rows)
    print(f"your own data as a task: {', '.join(tasks.family_names())} (README, 'A grid file')")
    rows = [[name, strategy.description] for name, strategy in _entries(negatives)]
    _print_table("negative-sampling strategies", ["name", "description"], rows)
    print(f"list variants: {', '.join(lists.VARIANTS)}")


def _list_methods() -> None:
    from rankuq import methods

    rows = [
        [
            name,
            method.description,
            ", ".join(f"{k}={f.default}" for k, f in method.Params.model_fields.items()),
        ]
        for name, method in _entries(methods)
    ]
    _print_table("methods", ["name", "description", "parameters (defaults)"], rows)


def _entries(package) -> list[tuple[str, object]]:
    return [(name, package.get(name)) for name in package.names()]


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: finished work kept, one line, the shell's exit code."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main_thread else None
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    actions = {
        "run": _run,
        "evaluate": _evaluate,
        "leaderboard": _leaderboard,
        "findings": _findings,
        "tasks": _list_tasks,
        "methods": _list_methods,
    }
    try:
        action = actions[args.command]
        action(args) if args.command in ("run", "evaluate", "leaderboard", "findings") else action()
    except RankuqError as error:
        print(f"rankuq: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as stop:
        command = shlex.join(["rankuq", *(sys.argv[1:] if argv is None else argv)])
        print(f"rankuq: interrupted; finished work is kept, resume with: {command}", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    return 0


def cli() -> None:
    """Console entry point."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
