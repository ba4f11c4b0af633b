"""The stages of a grid run, each a function over the plan (``bench.planning.plan``), in the order
``bench.run.grid_run.grid_run`` calls them:

    build → search → train → fit_calibrators → score → search_risk → probe → aggregate

(then ``bench.results.tracking.track``)

A stage does only what its cache (``bench.rundir.layout.RunLayout``) does not hold yet, so a rerun of a
finished grid starts no Ray and trains, fits and scores nothing. The Ray parts live in
``bench.engine`` (Ray itself and its resource arithmetic: ``bench.engine.cluster``), the files of
the results in ``bench.results.grid_files``; a stage only decides what to hand them.
"""

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from rankuq.atomic import atomic_write
from rankuq.bench import metrics
from rankuq.bench.engine.cluster import Cluster
from rankuq.bench.engine.members import train_members
from rankuq.bench.engine.posthoc import fit_posthoc
from rankuq.bench.engine.scoring import score_cells, score_shards
from rankuq.bench.engine.search import search_risk_b, search_training
from rankuq.bench.evaluation.paired_tests import CALIBRATION_ERRORS, significance
from rankuq.bench.evaluation.probe_cache import PROBES_VERSION, Study, cached_probes, headline
from rankuq.bench.planning.jobs import ScorerSpec, SearchResult
from rankuq.bench.planning.plan import Cell, Plan, content_key
from rankuq.bench.predictions import is_probabilistic, read_cached_predictions, write_cached_predictions
from rankuq.bench.probes import scored_lists
from rankuq.bench.results.grid_files import write_grid_files
from rankuq.bench.results.leaderboard import RANKING_METRICS, leaderboard
from rankuq.bench.rundir.layout import BEST_FILE
from rankuq.contract import read_judgments, shard_rows
from rankuq.methods.base import Fitted
from rankuq.tasks.base import data_root
from rankuq.tasks.shards import build_shards

Tables = dict[Cell, pa.Table]
# metrics of probabilities the leaderboard computes from the table: the calibration errors and scoring
# rules bench.metrics declares, less the probe's ERCE (ECE, ECE.all, Brier, NLL)
CALIBRATION = metrics.FROM_PROBABILITIES


def _bars(console: Console) -> Progress:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=console, transient=False)


def step(console: Console, bar: Progress, task: TaskID, what: str) -> None:
    """Advance ``task`` by one, described as ``what``; where the console is no terminal (a run in the
    background writing a log file) also one plain line: rich draws its bars there only once they
    stop, so an hour of scoring read as silence."""
    bar.update(task, advance=1, description=what)
    if console.is_terminal:
        return
    state = bar.tasks[task]
    of = "" if state.total is None else f"/{state.total:g}"
    console.print(f"{what}: {state.completed:g}{of} after {state.elapsed or 0:.0f} s", highlight=False)


@contextmanager
def progress(console: Console, what: str, total: int) -> Iterator[Callable[[str], None]]:
    with _bars(console) as bar:
        task = bar.add_task(what, total=total)

        yield lambda done: step(console, bar, task, f"{what} (last: {done})")


def over_cells(console: Console, what: str, cells: list[Cell]) -> Iterator[Cell]:
    with progress(console, what, len(cells)) as advance:
        for cell in cells:
            yield cell
            advance(cell.label())


def build(plan: Plan) -> None:
    """Write every candidate-list folder the plan reads (a cached one is kept as it is)."""
    root = data_root(plan.spec.data_dir)
    for lists, folder in plan.lists.items():
        built = build_shards(
            lists.task, lists.split, root=root, cache_dir=plan.layout.cache, **lists.arguments()
        )
        assert built == folder, f"planned {folder}, built {built}"  # one hash rule for both


def search(plan: Plan, cluster: Cluster, console: Console) -> dict[tuple[str, str], SearchResult]:
    """Run (or read) each training search; keyed like ``plan``'s ``chosen``."""
    found = {}
    for job in plan.searches:
        assert plan.spec.search is not None  # a plan searches only for a grid with a search section
        folder, storage = plan.layout.search(job.key), str(plan.layout.ray_storage)
        finished = (folder / BEST_FILE).exists()  # only read: no Ray needed
        if not finished:
            cluster.start()
        at_once = None if finished else cluster.trials_at_once(plan)
        found[job.choice] = search_training(job, plan.spec.search, folder, storage, at_once)
        console.print(found[job.choice].line())
    return found


def train(plan: Plan, cluster: Cluster, console: Console) -> None:
    """Train the members no earlier run finished, as parallel Tune trials."""
    layout = plan.layout
    pending = [job for key, job in plan.members.items() if not layout.training_file(key).exists()]
    console.print(f"[bold]training[/] {len(pending)} members ({len(plan.members) - len(pending)} cached)")
    if not pending:
        return
    cluster.start()
    with progress(console, "training members", len(pending)) as advance:
        train_members(pending, layout.models, layout.ray_storage, cluster.trials_at_once(plan), advance)


def fit_calibrators(plan: Plan, cluster: Cluster, console: Console) -> dict[str, Fitted]:
    """Each post-hoc cell's fitted state (temperature's T, …), fitted once on the dev lists, under a
    bar: each fit scores its dev lists first, minutes on a CPU."""
    files = {key: plan.layout.fit_file(key) for key in plan.fits}
    pending = [key for key, path in files.items() if not path.exists()]
    if pending:
        cluster.start()
        threads = cluster.scoring_threads()
        jobs = [plan.fits[key] for key in pending]
        pairs = sum(shard_rows(Path(job.scorer.shards)) or 0 for job in jobs)
        what = f"fitting post-hoc methods on {pairs:,} dev pairs"
        with progress(console, what, len(jobs)) as advance:
            states = fit_posthoc(
                [job.with_threads(threads) for job in jobs], lambda index: advance(jobs[index].scorer.method)
            )
        for key, state in zip(pending, states, strict=True):
            files[key].parent.mkdir(parents=True, exist_ok=True)
            atomic_write(files[key], json.dumps(state, indent=1))
    return {key: json.loads(path.read_text()) for key, path in files.items()}


Split = tuple[Cell, bool]  # a cell and whether it is scored on the dev split


def score(plan: Plan, cluster: Cluster, fitted: dict[str, Fitted], console: Console) -> tuple[Tables, Tables]:
    """Every cell's predictions on the tested split and, for the probes, on the dev split; a second
    bar follows the rows being scored. On CPUs cell by cell (``_predictions``); where members hold
    a GPU share, the splits not cached yet in one pass (``_score_in_one_pass``)."""
    tested: Tables = {}
    dev: Tables = {}
    splits = [
        (cell, on_dev) for cell in plan.cells for on_dev in ((False, True) if cell.dev_key else (False,))
    ]
    with _bars(console) as bars:
        cells = bars.add_task("scoring cells", total=len(plan.cells))
        rows = bars.add_task("  rows", total=None)

        def done(split: Split, table: pa.Table) -> None:
            cell, on_dev = split
            (dev if on_dev else tested)[cell] = table
            if on_dev or not cell.dev_key:  # the cell's last split
                step(console, bars, cells, f"scoring cells (last: {cell.label()})")

        if plan.spec.resources.gpus_per_trial > 0:
            pending = sum(shard_rows(_lists_of(plan, *split)) or 0 for split in splits)
            bars.reset(rows, total=pending or None, description="  rows of every split")
            _score_in_one_pass(plan, cluster, fitted, splits, done, lambda n: bars.advance(rows, n))
            return tested, dev
        for cell, on_dev in splits:
            split = plan.spec.eval.dev_split if on_dev else plan.spec.eval.split
            total = shard_rows(_lists_of(plan, cell, on_dev))
            bars.reset(rows, total=total, description=f"  rows of {cell.method} seed {cell.seed} on {split}")
            done((cell, on_dev), _predictions(plan, cluster, (cell, on_dev), fitted, bars, rows))
    return tested, dev


def _score_in_one_pass(
    plan: Plan,
    cluster: Cluster,
    fitted: dict[str, Fitted],
    splits: list[Split],
    done: Callable[[Split, pa.Table], None],
    on_rows: Callable[[int], None],
) -> None:
    """``splits``' predictions, the cached ones read, the rest scored by one actor pool for the whole
    run (``score_cells``: each actor's start-up paid once, not once per cell), in order."""
    pending = []
    for split in splits:
        cached = read_cached_predictions(_predictions_file(plan, *split))
        if cached is None:
            pending.append(split)
        else:
            on_rows(cached.num_rows)  # the bar's total counts every split, cached ones too
            done(split, cached)
    if not pending:
        return
    cluster.start()
    gpus = min(1.0, plan.spec.resources.gpus_per_trial)
    threads = max(1, int(plan.spec.resources.cpus_per_trial))  # what a trial holds
    specs = [_scorer(plan, cell, on_dev, fitted, threads) for cell, on_dev in pending]
    found = score_cells(specs, plan.spec.eval.batch_size, gpus, cluster.scorers_at_once(gpus, threads))
    for split, table in zip(pending, found, strict=True):
        write_cached_predictions(_predictions_file(plan, *split), table)
        on_rows(table.num_rows)
        done(split, table)


def _predictions_file(plan: Plan, cell: Cell, on_dev: bool) -> Path:
    key = cell.dev_key if on_dev else cell.key
    return plan.layout.predictions(cell.task, cell.method, cell.seed, str(key), dev=on_dev)


def _lists_of(plan: Plan, cell: Cell, on_dev: bool) -> Path:
    """The folder of ``cell``'s tested (or dev) lists."""
    return (plan.dev if on_dev else plan.tested)[cell.condition]


def _scorer(plan: Plan, cell: Cell, on_dev: bool, fitted: dict[str, Fitted], threads: int) -> ScorerSpec:
    """How a worker scores ``cell`` on its tested (or dev) lists, with its post-hoc state."""
    shards = _lists_of(plan, cell, on_dev)
    return plan.scorer(cell, shards, fitted.get(cell.fit) if cell.fit else None, threads)


def _predictions(
    plan: Plan, cluster: Cluster, split: Split, fitted: dict[str, Fitted], bars: Progress, rows: TaskID
) -> pa.Table:
    """A split's predictions on a CPU: cached, or scored by one-thread Ray tasks, a scorer per CPU."""
    path = _predictions_file(plan, *split)
    cached = read_cached_predictions(path)  # a cut or foreign file: one warning, scored again
    if cached is not None:
        return cached
    cluster.start()
    scorer = _scorer(plan, *split, fitted, 1)
    on_rows = functools.partial(bars.advance, rows)
    table = score_shards(scorer, plan.spec.eval.batch_size, on_rows=on_rows, scorers=cluster.cpu_scorers())
    write_cached_predictions(path, table)
    return table


def search_risk(plan: Plan, dev: Tables, cluster: Cluster, console: Console) -> dict[Cell, SearchResult]:
    """Each stochastic cell's RA b, searched on its dev predictions (with one draw b changes nothing)."""
    grid = plan.spec.search
    if grid is None or "risk.b" not in grid.space:
        return {}
    found = {}
    for cell, table in dev.items():
        lists = scored_lists(table, "dev").with_relevant()
        if lists.samples is None:
            continue
        key = content_key("search-b", cell.dev_key, grid.identity(["risk.b"]))
        folder, storage = plan.layout.search(key), str(plan.layout.ray_storage)
        if not folder.exists():
            cluster.start()
        found[cell] = search_risk_b(f"risk.b of {cell.label()}", lists, grid, folder, storage, cell.seed)
        console.print(found[cell].line())
    return found


def probe(
    plan: Plan, tested: Tables, dev: Tables, risk: dict[Cell, SearchResult], console: Console
) -> dict[Cell, Study]:
    """The probes of every seed (cached), RA at the searched b where there is one."""
    studies = {}
    for cell in over_cells(console, "probing cells", plan.cells):
        searched = {**dict(cell.tuned), **(risk[cell].best if cell in risk else {})}
        b = searched.get("risk.b")
        # The probes asked for are part of the key: a probe added to a grid runs on its rerun.
        key = content_key("probes", PROBES_VERSION, cell.key, cell.dev_key, b, sorted(plan.probes))
        folder = plan.layout.probes(cell.task, cell.method, cell.seed, key)
        options = {"risk": {"b": b}} if b is not None else {}
        subject = cell.label()  # the plots' title: a PNG alone says whose it is
        found = cached_probes(folder, tested[cell], dev.get(cell), plan.probes, cell.seed, options, subject)
        studies[cell] = Study(*found, key=key, searched=searched)
    return studies


@dataclass(frozen=True)
class Evaluation:
    """The grid's numbers: one row per seed, the leaderboard, and the files written from them."""

    results: pd.DataFrame
    board: pd.DataFrame
    files: tuple[Path, ...]  # leaderboard.md, report.html, leaderboard.csv, plots/index.json


def aggregate(plan: Plan, tested: Tables, studies: dict[Cell, Study]) -> Evaluation:
    """Ranking metrics and ECE per seed, the leaderboard (mean ± std, p-values against the
    baseline), the plot index, leaderboard.csv, seeds.csv (every probe value of every seed) and
    queries.parquet (the same split by query: what `rankuq findings` resamples), and the Markdown and
    HTML reports."""
    judgments = {condition: read_judgments(folder) for condition, folder in plan.tested.items()}
    rows = [_seed_row(cell, tested[cell], studies[cell], judgments[cell.condition]) for cell in plan.cells]
    results = pd.DataFrame(rows)
    board = leaderboard(results, _significance(plan, tested, judgments), plan.spec.baseline)
    return Evaluation(results, board, write_grid_files(plan, results, board, studies))


def _seed_row(cell: Cell, table: pa.Table, study: Study, judgments: pa.Table | None) -> dict[str, object]:
    """A seed's leaderboard values: ranking metrics and, for probabilities, Penha & Hauff, 2021's balanced
    ECE, the pooled ECE.all, Brier and NLL (from the table, probes or not), then the probes' headline
    values. Scores that are not probabilities (BM25's) get none of them and no ERCE: the probe's ERCE
    of raw scores says nothing. Retrieved lists are measured against their split's ``judgments``
    (every query of the qrels, as ir-measures does), other lists against their own labels."""
    probabilistic = is_probabilistic(table)
    names = [*RANKING_METRICS, *(CALIBRATION if probabilistic else ())]
    values = metrics.compute(table, names, qrels=judgments, drop_queries_without_relevant=judgments is None)
    keys = {"condition": cell.condition, "method": cell.method, "seed": cell.seed}
    row = {**keys, **dict.fromkeys(CALIBRATION, np.nan), **headline(study.metrics), **values}
    return row if probabilistic else {**row, "ERCE": np.nan}


def _significance(
    plan: Plan, tested: Tables, judgments: dict[str, pa.Table | None]
) -> dict[tuple[str, str], dict[str, float]]:
    """Each (condition, method)'s p-values against the baseline method of that condition."""
    baseline = plan.spec.baseline
    if baseline is None:
        return {}
    p_values = {}
    for condition in dict.fromkeys(cell.condition for cell in tested):
        tables: dict[str, list[pa.Table]] = {}
        for cell, table in tested.items():
            if cell.condition == condition:
                tables.setdefault(cell.method, []).append(table)
        names = [*RANKING_METRICS, *CALIBRATION_ERRORS]
        tests = significance(tables, baseline, names, judgments[condition])
        p_values.update({(condition, method): values for method, values in tests.items()})
    return p_values
