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
    for probe in EVALUATE_PROBES:
        evaluate.add_argument(f"--{probe}", action="store_true", help=f"add the {probe} probe (bench.probes)")
    evaluate.add_argument("--dev", type=Path, help="dev-split predictions Parquet: RA's b, abstention fits")
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
    return parser


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
    for table in rich_tables(board, console.width):
        console.print(table)
    console.print(footnote(board.table))


def _evaluate(args: argparse.Namespace) -> None:
    from rankuq.bench.evaluate import evaluate_file

    probes = [probe for probe in EVALUATE_PROBES if getattr(args, probe)]
    values = evaluate_file(
        run=args.run,
        qrels=args.qrels,
        predictions=args.predictions,
        probes=probes,
        dev=args.dev,
        seed=args.seed,
        strict=args.strict,
    )
    if args.json:
        print(json.dumps(values))
    else:
        _print_table("evaluation", ["metric", "value"], [[k, f"{v:.4f}"] for k, v in values.items()])


def _leaderboard(args: argparse.Namespace) -> None:
    from rankuq.bench.leaderboard import read_run_dir, read_tracking
    from rankuq.bench.report import write_report

    if (args.run_dir is None) == (args.tracking_uri is None) or (args.grid and args.run_dir):
        raise RankuqError("rankuq leaderboard: give either RUN_DIR or --tracking-uri URI [--grid NAME]")
    from rankuq.bench.preflight import check_output_folder, check_tracking_uri

    if args.tracking_uri:
        check_tracking_uri(args.tracking_uri)
    if args.out:
        check_output_folder(args.out, "--out")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")  # plot downloads: no bars
    with tempfile.TemporaryDirectory() as downloads:  # the report embeds the plots: no need to keep them
        board = (
            read_run_dir(args.run_dir)
            if args.run_dir
            else read_tracking(args.tracking_uri, args.grid, Path(downloads), args.experiment)
        )
        _show(board)
        paths = write_report(board, args.out or args.run_dir or Path("reports") / board.name)
    print(f"written: {paths[0]} and {paths[1]}")


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
        "tasks": _list_tasks,
        "methods": _list_methods,
    }
    try:
        action = actions[args.command]
        action(args) if args.command in ("run", "evaluate", "leaderboard") else action()
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
