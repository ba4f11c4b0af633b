"""``rankuq run``: check the inputs, take the run-directory lock, plan or run the grid."""

import argparse
import contextlib
import logging
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from rankuq.bench.cli.common import PIPED_WIDTH, PROSE_WIDTH, stdout_console
from rankuq.errors import RankuqError

if TYPE_CHECKING:
    from rankuq.bench.results.boards import Board


def _run(args: argparse.Namespace) -> None:
    from rankuq.bench.preflight.addresses import check_ray_address
    from rankuq.bench.preflight.backbone_folder import locate_backbone
    from rankuq.bench.preflight.paths import check_output_folder
    from rankuq.bench.preflight.tracking_inputs import check_experiment, check_tracking_uri
    from rankuq.bench.results.mlflow_names import experiment_name

    # What was given, checked before the slow imports (Ray, torch, MLflow) and before any write.
    if args.grid is not None and not args.grid.is_file():
        raise RankuqError(f"grid file not found: {args.grid}")
    if args.data_dir:
        from rankuq.tasks import data_root  # imports pyarrow (seconds on a loaded machine): only here

        data_root(args.data_dir)
    if args.backbone is not None and not args.backbone.is_dir():
        raise RankuqError(
            f"--backbone {args.backbone}: no such folder; give a checkpoint folder (config.json, weights, "
            "tokenizer), such as a trained member RUN_DIR/models/<key>"
        )
    locate_backbone(str(args.backbone) if args.backbone else _given_backbone(args.grid))
    if args.run_dir:
        check_output_folder(args.run_dir, "--run-dir")
    check_ray_address(args.address)
    if args.tracking_uri:
        check_tracking_uri(args.tracking_uri)
    check_experiment(experiment_name(args.experiment), _experiment_option(args.experiment))

    if args.plan:  # prints, writes nothing, starts nothing: no lock needed
        _run_grid(args, locked=True)
        return

    from rankuq.bench.rundir.lock import run_dir_lock

    # A run directory that exists may be in use: find out at once, not after the imports; a new one
    # is created (and locked) only once the grid validated.
    early = args.run_dir is not None and args.run_dir.is_dir()
    with run_dir_lock(args.run_dir) if early else contextlib.nullcontext():
        _run_grid(args, locked=early)


def _given_backbone(grid: Path | None) -> str | None:
    """The grid file's model.backbone as written, read ahead of its validation (which imports
    torch, seconds) so a model that cannot load fails first; None where it names none."""
    try:
        raw = yaml.safe_load(grid.read_text()) if grid is not None else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # the grid's own loading says what is wrong with it
    model = raw.get("model") if isinstance(raw, dict) else None
    backbone = model.get("backbone") if isinstance(model, dict) else None
    return backbone if isinstance(backbone, str) else None


def _experiment_option(given: str | None) -> str:
    """Where the experiment's name came from, for its error line."""
    return "--experiment" if given else "$MLFLOW_EXPERIMENT_NAME"


def _run_grid(args: argparse.Namespace, locked: bool) -> None:
    from rankuq.bench.config.grid import load_grid
    from rankuq.bench.preflight.backbone_folder import check_backbone
    from rankuq.bench.rundir.layout import RunLayout
    from rankuq.tasks import data_root

    spec, params = load_grid(args.grid)
    if args.data_dir:
        spec = spec.model_copy(update={"data_dir": args.data_dir})
    if args.backbone is not None:  # absolute: the members' keys do not depend on the working folder
        model = spec.model.model_copy(update={"backbone": str(args.backbone.resolve())})
        spec = spec.model_copy(update={"model": model})
    data_root(spec.data_dir)
    # a model that does not load fails here, not in a trial once Ray is up
    check_backbone(spec.model, given_head=spec.train.epochs == 0)
    run_dir = args.run_dir or Path("runs") / spec.name
    if args.plan:  # before the engine's imports (Ray Train, Tune, Data; MLflow): seconds saved
        from rankuq.bench.planning.plan import plan
        from rankuq.bench.planning.summary import describe

        print(describe(plan(spec, params, RunLayout(run_dir))))
        return

    from rankuq.bench.engine.processes import stop_recorded
    from rankuq.bench.preflight.paths import check_output_folder
    from rankuq.bench.results.boards import read_run_dir
    from rankuq.bench.run.runner import build_lists, run_built
    from rankuq.bench.rundir.atomic import removed_on_error
    from rankuq.bench.rundir.lock import run_dir_lock

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
            planned = build_lists(spec, params, layout)
        run_built(planned, args.tracking_uri, args.address, experiment=args.experiment)
    _show(read_run_dir(run_dir))
    print(f"written: leaderboard.md, .csv and report.html in {run_dir}, beside the MLflow store")
    from rankuq.bench.results.tracking import experiment_page

    page = experiment_page(args.tracking_uri or layout.default_tracking_uri, args.experiment)
    if page:
        print(f"MLflow: {page}")


def _show(board: "Board", columns: list[str] | None = None) -> None:
    """The board's per-condition tables (``columns``: the metrics shown; else those that fit the
    width) and their footnote, wrapped, on the terminal."""
    from rankuq.bench.results.leaderboard import footnote
    from rankuq.bench.results.rendering import rich_tables

    console = stdout_console()
    fitted = None if console.width == PIPED_WIDTH or columns else console.width
    for table in rich_tables(board, fitted, columns):
        console.print(table)
    console.print(textwrap.fill(footnote(board.table, changes=False), min(console.width, PROSE_WIDTH)))
