"""Run a grid end to end, stage by stage over its plan (``bench.plan``, ``bench.stages``):

    plan → build lists → search → train → fit → score → search risk b → probe → evaluate → track

Every stage is cached by content keys under the run directory (``bench.layout``), so a rerun only
does what is new, and a finished grid starts no Ray.
"""

from pathlib import Path

import pandas as pd
from rich.console import Console

from rankuq.bench import stages
from rankuq.bench.grid import GridSpec
from rankuq.bench.layout import RunLayout
from rankuq.bench.plan import plan
from rankuq.bench.tracking import track
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
    console = console or Console(stderr=True)
    layout = RunLayout(run_dir)
    grid = plan(spec, params, layout)  # fails on missing data before anything is written
    layout.root.mkdir(parents=True, exist_ok=True)
    with stages.Cluster(address, layout) as cluster:
        stages.build(grid)
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
