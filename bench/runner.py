"""Run a grid end to end, stage by stage over its plan (``bench.plan``, ``bench.stages``):

    plan → build lists → MLflow store → search → train → fit → score → search risk b → probe
    → evaluate → track

Every stage is cached by content keys under the run directory (``bench.layout``), so a rerun only
does what is new, and a finished grid starts no Ray. Bad data fails while the lists are built,
and a run directory made until then is removed.
"""

from pathlib import Path

import pandas as pd
from rich.console import Console

from rankuq.bench import stages
from rankuq.bench.files import removed_on_error
from rankuq.bench.grid import GridSpec
from rankuq.bench.layout import RunLayout
from rankuq.bench.plan import Plan, plan
from rankuq.bench.tracking import prepare_store, track
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
        grid = build_lists(spec, params, layout)
    return run_built(grid, tracking_uri, address, console, experiment)


def build_lists(spec: GridSpec, params: dict[str, MethodParams], layout: RunLayout) -> Plan:
    """The grid's plan with its candidate lists built: every data row read and checked (a bad row
    fails here, before the MLflow store, Ray or training)."""
    grid = plan(spec, params, layout)  # fails on missing data before anything is written
    layout.root.mkdir(parents=True, exist_ok=True)
    stages.build(grid)
    return grid


def run_built(
    grid: Plan,
    tracking_uri: str | None = None,
    address: str | None = None,
    console: Console | None = None,
    experiment: str | None = None,
) -> pd.DataFrame:
    """Run (or resume) a grid whose lists ``build_lists`` built; return the leaderboard."""
    console = console or Console(stderr=True)
    spec, params, layout = grid.spec, grid.params, grid.layout
    prepare_store(tracking_uri or layout.default_tracking_uri, owned=tracking_uri is None)
    with stages.Cluster(address, layout) as cluster:
        searches = stages.search(grid, cluster, console)
        if grid.searches:  # the searches' choices change what the members train
            grid = plan(spec, params, layout, {choice: found.best for choice, found in searches.items()})
        stages.train(grid, cluster, console)
        fitted = stages.fit(grid, cluster)
        tested, dev = stages.score(grid, cluster, fitted, console)
        risk = stages.search_risk(grid, dev, cluster, console)
    studies = stages.probe(grid, tested, dev, risk, console)
    evaluation = stages.evaluate(grid, tested, studies)
    found = [*searches.values(), *risk.values()]
    track(
        grid, studies, evaluation.results, evaluation.board, evaluation.files, found, tracking_uri, experiment
    )
    return evaluation.board
