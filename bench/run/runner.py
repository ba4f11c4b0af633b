"""Run a grid end to end, stage by stage over its plan (``bench.planning.plan``, ``bench.run.stages``):

    plan → build lists → MLflow store → search → train → fit calibrators → score → search risk b
    → probe → aggregate → track

Every stage is cached by content keys under the run directory (``bench.rundir.layout``), so a rerun only
does what is new, and a finished grid starts no Ray. Bad data fails while the lists are built,
and a run directory made until then is removed.
"""

from pathlib import Path

import pandas as pd
from rich.console import Console

from rankuq.bench.config.grid import GridSpec
from rankuq.bench.planning.plan import Plan, plan
from rankuq.bench.results.mlflow_store import prepare_store
from rankuq.bench.results.tracking import track
from rankuq.bench.run import stages
from rankuq.bench.rundir.atomic import removed_on_error
from rankuq.bench.rundir.layout import RunLayout
from rankuq.methods.base import MethodParams


def run_grid(
    spec: GridSpec,
    params: dict[str, MethodParams],
    run_dir: Path,
    tracking_uri: str | None = None,
    address: str | None = None,
    console: Console | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) the grid; return the leaderboard."""
    layout = RunLayout(run_dir)
    with removed_on_error(layout.root, layout.cache):  # bad data leaves no run directory behind
        planned = build_lists(spec, params, layout)
    return run_built(planned, tracking_uri, address, console, experiment)


def build_lists(spec: GridSpec, params: dict[str, MethodParams], layout: RunLayout) -> Plan:
    """The grid's plan with its candidate lists built: every data row read and checked (a bad row
    fails here, before the MLflow store, Ray or training)."""
    planned = plan(spec, params, layout)  # fails on missing data before anything is written
    layout.root.mkdir(parents=True, exist_ok=True)
    stages.build(planned)
    return planned


def run_built(
    planned: Plan,
    tracking_uri: str | None = None,
    address: str | None = None,
    console: Console | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) a grid whose lists ``build_lists`` built; return the leaderboard."""
    console = console or Console(stderr=True)
    spec, params, layout = planned.spec, planned.params, planned.layout
    prepare_store(tracking_uri or layout.default_tracking_uri, owned=tracking_uri is None)
    with stages.Cluster(address, layout) as cluster:
        searches = stages.search(planned, cluster, console)
        if planned.searches:  # the searches' choices change what the members train
            planned = plan(spec, params, layout, {choice: found.best for choice, found in searches.items()})
        stages.train(planned, cluster, console)
        fitted = stages.fit_calibrators(planned, cluster)
        tested, dev = stages.score(planned, cluster, fitted, console)
        risk = stages.search_risk(planned, dev, cluster, console)
    studies = stages.probe(planned, tested, dev, risk, console)
    aggregated = stages.aggregate(planned, tested, studies)
    found = [*searches.values(), *risk.values()]
    results, board, files = aggregated.results, aggregated.board, aggregated.files
    track(planned, studies, results, board, files, found, tracking_uri, experiment)
    return aggregated.board
