"""One grid run, whoever asks for it (``rankuq run``, ``rankuq.run_grid``, ``rankuq evaluate
--model``, the tests), from one function, ``grid_run``:

    preflight → run-directory lock → the run's leftover Ray processes stopped → plan → build lists
    → MLflow store → search → train → fit calibrators → score → search risk b → probe → aggregate
    → track

each invocation's wall time, machine and outcome added to the run directory's compute.json
(``bench.rundir.compute_log``), finished, interrupted or failed.

The preflight needs nothing slow: this module imports Ray, torch and MLflow only once the inputs are
checked, so a bad input fails in a second. Every stage (``bench.run.stages``) is cached by content
keys under the run directory (``bench.rundir.layout``), so a rerun only does what is new and a
finished grid starts no Ray. Bad data fails while the lists are built, and a run directory made
until then is removed. ``plan_grid`` is the same walk stopped at the plan: it writes nothing, takes
no lock and starts nothing.
"""

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from rankuq.bench.preflight.addresses import check_ray_address
from rankuq.bench.preflight.backbone_folder import locate_backbone
from rankuq.bench.preflight.paths import check_output_folder
from rankuq.bench.preflight.tracking_inputs import check_experiment, check_tracking_uri, experiment_option
from rankuq.bench.results.mlflow_names import experiment_name
from rankuq.bench.rundir.lock import run_dir_lock
from rankuq.errors import RankuqError

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

    from rankuq.bench.config.grid import GridSpec
    from rankuq.bench.planning.plan import Plan
    from rankuq.bench.rundir.layout import RunLayout
    from rankuq.methods.base import MethodParams


@dataclass(frozen=True)
class GridRequest:
    """A grid run as asked for, before any check (the command's options, the API's arguments)."""

    grid: Path | Mapping[str, object] | None = None  # a YAML file, a grid as a dict, None: the built-in grid
    run_dir: Path | None = None  # None: runs/<the grid's name>
    data_dir: str | Path | None = None  # replaces the grid's data_dir
    backbone: Path | None = None  # a checkpoint folder that replaces the grid's model.backbone
    tracking_uri: str | None = None  # None: the MLflow store in the run directory
    address: str | None = None  # a Ray cluster's address; None: a local Ray
    experiment: str | None = None  # None: $MLFLOW_EXPERIMENT_NAME, else rankuq
    source: str = "grid"  # how the errors of a dict grid name it
    holder: str | None = None  # who runs it, as the run-directory lock names it; None: the command line


@dataclass(frozen=True)
class FinishedGrid:
    """A grid run that ended: its leaderboard and where its files lie."""

    board: "pd.DataFrame"
    layout: "RunLayout"


def preflight(request: GridRequest) -> None:
    """What was given, checked before the slow imports (Ray, torch, MLflow) and before any write;
    the first problem raises a RankuqError of one line."""
    if isinstance(request.grid, Path) and not request.grid.is_file():
        raise RankuqError(f"grid file not found: {request.grid}")
    if request.data_dir:
        from rankuq.tasks import data_root  # imports pyarrow (seconds on a loaded machine): only here

        data_root(request.data_dir)
    if request.backbone is not None and not request.backbone.is_dir():
        raise RankuqError(
            f"--backbone {request.backbone}: no such folder; give a checkpoint folder (config.json, "
            "weights, tokenizer), such as a trained member RUN_DIR/models/<key>"
        )
    locate_backbone(str(request.backbone) if request.backbone else _given_backbone(request.grid))
    if request.run_dir:
        check_output_folder(request.run_dir, "--run-dir")
    check_ray_address(request.address)
    if request.tracking_uri:
        check_tracking_uri(request.tracking_uri)
    check_experiment(experiment_name(request.experiment), experiment_option(request.experiment))


def plan_grid(request: GridRequest) -> "Plan":
    """The grid's plan, its inputs checked: nothing written, no lock, no Ray (nor its imports)."""
    preflight(request)
    spec, params, layout = _validated(request)
    from rankuq.bench.planning.plan import plan

    return plan(spec, params, layout)


def grid_run(
    request: GridRequest, console: "Console | None" = None, planned: "Plan | None" = None
) -> FinishedGrid:
    """Run (or resume) the grid: preflight, then the run directory locked for this run alone, the Ray
    processes a killed run of it left stopped, its plan, stages and results. A second run on the same
    directory is refused at once, naming the holder; bad data leaves no new run directory behind.
    ``planned``: the request's ``plan_grid``, where the caller made it (to show it): reused, its
    inputs not checked nor its backbone loaded again."""
    if planned is None:
        preflight(request)
    # A run directory that exists may be in use: find out at once, not after the imports; a new one
    # is created (and locked) only once the grid validated.
    existing = request.run_dir if request.run_dir is not None and request.run_dir.is_dir() else None
    with contextlib.ExitStack() as held:
        if existing:
            held.enter_context(run_dir_lock(existing, request.holder))
        if planned is None:
            spec, params, layout = _validated(request)
        else:
            spec, params, layout = planned.spec, planned.params, planned.layout
        check_output_folder(layout.root, "run directory")
        from rankuq.atomic import removed_on_error
        from rankuq.bench.engine.processes import stop_recorded
        from rankuq.bench.planning.plan import plan
        from rankuq.bench.rundir.compute_log import start, timed_invocation

        began = start()
        with removed_on_error(layout.root, layout.cache):  # bad data leaves no run directory behind
            if not existing:
                held.enter_context(run_dir_lock(layout.root, request.holder))
            stop_recorded(layout.ray_pids)
            planned = _lists_built(planned or plan(spec, params, layout))  # missing data fails here
        logged = timed_invocation(layout.root, began, _gpus(spec), request.address, _members(planned))
        held.enter_context(logged)
        board = _stages(planned, request, console)
    return FinishedGrid(board, layout)


def _lists_built(planned: "Plan") -> "Plan":
    """The grid's plan with its candidate lists built: every data row read and checked (a bad row
    fails here, before the MLflow store, Ray or training)."""
    from rankuq.bench.run import stages

    planned.layout.root.mkdir(parents=True, exist_ok=True)
    stages.build(planned)
    return planned


def _stages(planned: "Plan", request: GridRequest, console: "Console | None") -> "pd.DataFrame":
    """The stages after the lists, in order; the leaderboard."""
    from rich.console import Console

    from rankuq.bench.engine.cluster import Cluster
    from rankuq.bench.planning.plan import plan
    from rankuq.bench.results.mlflow_store import prepare_store
    from rankuq.bench.results.tracking import track
    from rankuq.bench.run import stages

    console = console or Console(stderr=True)
    spec, params, layout = planned.spec, planned.params, planned.layout
    tracking_uri = request.tracking_uri
    prepare_store(tracking_uri or layout.default_tracking_uri, owned=tracking_uri is None)
    with Cluster(request.address, layout) as cluster:
        searches = stages.search(planned, cluster, console)
        if planned.searches:  # the searches' choices change what the members train
            planned = plan(spec, params, layout, {choice: found.best for choice, found in searches.items()})
        stages.train(planned, cluster, console)
        fitted = stages.fit_calibrators(planned, cluster, console)
        tested, dev = stages.score(planned, cluster, fitted, console)
        risk = stages.search_risk(planned, dev, cluster, console)
    studies = stages.probe(planned, tested, dev, risk, console)
    aggregated = stages.aggregate(planned, tested, studies)
    found = [*searches.values(), *risk.values()]
    results, board, files = aggregated.results, aggregated.board, aggregated.files
    track(planned, studies, results, board, files, found, tracking_uri, request.experiment)
    return aggregated.board


def _validated(request: GridRequest) -> "tuple[GridSpec, dict[str, MethodParams], RunLayout]":
    """The grid validated with the request's replacements, its data folder found and its backbone
    loaded (a model that does not load fails here, not in a trial once Ray is up)."""
    from rankuq.bench.config.grid import load_grid, parse_grid
    from rankuq.bench.preflight.backbone_folder import check_backbone
    from rankuq.bench.rundir.layout import RunLayout
    from rankuq.tasks import data_root

    if isinstance(request.grid, Mapping):
        spec, params = parse_grid(dict(request.grid), request.source)
    else:
        spec, params = load_grid(request.grid)
    if request.data_dir:
        spec = spec.model_copy(update={"data_dir": str(request.data_dir)})
    if request.backbone is not None:  # absolute: the members' keys do not depend on the working folder
        model = spec.model.model_copy(update={"backbone": str(request.backbone.resolve())})
        spec = spec.model_copy(update={"model": model})
    data_root(spec.data_dir)
    check_backbone(spec.model, given_head=spec.train.epochs == 0)  # a scored-as-is checkpoint needs its head
    return spec, params, RunLayout(request.run_dir or Path("runs") / spec.name)


def _members(planned: "Plan") -> dict[str, int]:
    """The grid's members and those already trained as the invocation begins (its compute log's)."""
    cached = sum(planned.layout.training_file(key).exists() for key in planned.members)
    return {"members": len(planned.members), "members_cached": cached}


def _gpus(spec: "GridSpec") -> int:
    """The GPUs this machine lends a grid that asks for them (its trials' GPUs), else 0."""
    if not spec.resources.gpus_per_trial:
        return 0
    import torch

    return torch.cuda.device_count()


def _given_backbone(grid: Path | Mapping[str, object] | None) -> str | None:
    """The grid's model.backbone as written, read ahead of its validation (which imports torch,
    seconds) so a model that cannot load fails first; None where it names none."""
    try:
        raw = yaml.safe_load(grid.read_text()) if isinstance(grid, Path) else grid
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # the grid's own loading says what is wrong with it
    model = raw.get("model") if isinstance(raw, Mapping) else None
    backbone = model.get("backbone") if isinstance(model, Mapping) else None
    return backbone if isinstance(backbone, str) else None
