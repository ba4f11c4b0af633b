"""A validated grid's stages, one after the other over its plan (``bench.planning.plan``,
``bench.run.stages``):

    plan → build lists → MLflow store → search → train → fit calibrators → score → search risk b
    → probe → aggregate → track

Every stage is cached by content keys under the run directory (``bench.rundir.layout``), so a rerun only
does what is new, and a finished grid starts no Ray. Bad data fails while the lists are built,
and a run directory made until then is removed. The command and the API come in through
``bench.run.grid_run``, which checks the inputs before this module's slow imports.
"""

from contextlib import ExitStack
from pathlib import Path

import pandas as pd
from rich.console import Console

from rankuq.atomic import removed_on_error
from rankuq.bench.config.grid import GridSpec
from rankuq.bench.engine.cluster import Cluster
from rankuq.bench.engine.processes import stop_recorded
from rankuq.bench.planning.plan import Plan, plan
from rankuq.bench.results.mlflow_store import prepare_store
from rankuq.bench.results.tracking import track
from rankuq.bench.run import stages
from rankuq.bench.rundir.layout import RunLayout
from rankuq.bench.rundir.lock import run_dir_lock
from rankuq.methods.base import MethodParams


def run_stages(
    spec: GridSpec,
    params: dict[str, MethodParams],
    run_dir: Path,
    tracking_uri: str | None = None,
    address: str | None = None,
    console: Console | None = None,
    experiment: str | None = None,
    *,
    locked: bool = False,
    planned: Plan | None = None,
    holder: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) the stages of a validated grid (no preflight: ``bench.run.grid_run`` is the
    way in that checks the inputs first); return the leaderboard. The run directory is locked for
    this run alone (``locked``: the caller already holds it, as ``bench.run.grid_run`` does for a
    directory that exists; ``holder``: who runs it, as the lock names it), the Ray processes a killed
    run of it left are stopped, then the lists are built (over ``planned``, the grid's plan where the
    caller made it), the stages run and the results written."""
    layout = RunLayout(run_dir)
    with ExitStack() as held:
        with removed_on_error(layout.root, layout.cache):  # bad data leaves no run directory behind
            if not locked:
                held.enter_context(run_dir_lock(run_dir, holder))
            stop_recorded(layout.ray_pids)
            planned = _lists_built(planned or plan(spec, params, layout))  # missing data fails here
        return _stages_after_lists(planned, tracking_uri, address, console, experiment)


def _lists_built(planned: Plan) -> Plan:
    """The grid's plan with its candidate lists built: every data row read and checked (a bad row
    fails here, before the MLflow store, Ray or training)."""
    planned.layout.root.mkdir(parents=True, exist_ok=True)
    stages.build(planned)
    return planned


def _stages_after_lists(
    planned: Plan,
    tracking_uri: str | None = None,
    address: str | None = None,
    console: Console | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) the stages of a grid whose lists ``_lists_built`` built; return the leaderboard."""
    console = console or Console(stderr=True)
    spec, params, layout = planned.spec, planned.params, planned.layout
    prepare_store(tracking_uri or layout.default_tracking_uri, owned=tracking_uri is None)
    with Cluster(address, layout) as cluster:
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
    track(planned, studies, results, board, files, found, tracking_uri, experiment)
    return aggregated.board
