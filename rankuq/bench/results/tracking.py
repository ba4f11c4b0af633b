"""MLflow leaderboard store: one parent MLflow run per grid, a child per cell, a grandchild per seed.

Each MLflow run carries a ``rankuq.key`` content-hash tag, so a rerun finds it instead of adding a new
one. Only the driver writes (a single SQLite writer avoids "database is locked").

What `rankuq leaderboard --tracking-uri` reads back (``bench.results.boards.read_tracking``):

- the grid's MLflow run: tags ``rankuq.level=grid``, ``rankuq.baseline`` (the baseline method) and
  ``rankuq.metrics`` (JSON list of the board's metric names, in column order: MLflow keys cannot
  be turned back into names such as ``nAUC AP u_max``); MLflow run name = grid name; artifact
  ``index.json`` (the plot index of ``RUN_DIR/plots``); for the MLflow UI (not read back), the
  description ``mlflow.note.content`` (the Markdown leaderboard) and the image ``leaderboard``
  (``log_image``: the method × metric overview plot, in its own and the experiment's chart views);
- the cells' MLflow runs (``mlflow.parentRunId`` = the grid's): tags ``rankuq.level=cell``, ``method``,
  ``task``, ``shift`` (the condition) and ``rankuq.row`` (the row in leaderboard.csv, so the board
  keeps its order); param ``seeds``; metrics ``mlflow_name(column)`` of the board's columns
  ``M``, ``M std`` and ``M p`` (``R_at_1``, ``R_at_1_std``, ``R_at_1_p``; NaN values are not
  logged, nor a std of one seed); the plot files of index.json as artifacts under their index names.

For the UI, every MLflow run carries the checkout's tags (``checkout_tags``: the commit…), a cell's
and a seed's also the params ``method``, ``task``, ``shift``, ``seed`` (a cell's: its seeds,
comma-separated) and ``backbone``; the saved view of the experiment's MLflow runs table
(``mlflow_names.mlflow_runs_table_view``) lists the cells as rows.

A search's MLflow run (``bench.engine.search``, under the grid's) carries ``rankuq.level=search``, the
chosen values as params (``train.lr``, ``risk.b``), metrics ``dev_<metric>``, ``trials`` and
``stopped_early``, and the trial table ``trials.csv``; a seed's MLflow run logs the searched values it
used as params.
"""

import io
import json
import shlex
import subprocess
import time
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mlflow
import mlflow.store
import numpy as np
import pandas as pd
import yaml
from mlflow.entities import Metric, Param, RunTag
from mlflow.store.tracking import SEARCH_MAX_RESULTS_THRESHOLD
from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

from rankuq import version
from rankuq.atomic import atomic_write
from rankuq.bench.rundir.layout import TRIALS_FILE

if TYPE_CHECKING:
    from rankuq.backbone import ModelConfig
    from rankuq.bench.evaluation.probe_cache import Study
    from rankuq.bench.planning.jobs import SearchResult
    from rankuq.bench.planning.plan import Cell, Plan

from rankuq.bench.results.mlflow_names import (
    BASELINE_TAG,
    EXPERIMENT,
    EXPERIMENT_KIND,
    KEY_TAG,
    LEVEL_TAG,
    METRICS_TAG,
    NOTE_TAG,
    OVERVIEW_KEY,
    ROW_TAG,
    SOURCE_TAGS,
    VIEW_TAG,
    experiment_name,
    experiment_url,
    mlflow_name,
    mlflow_runs_table_view,
)
from rankuq.bench.results.mlflow_store import PROXIED_ROOT, StoreClient, artifacts_destination


class Tracker:
    """An experiment's MLflow runs, each found by its content key (``KEY_TAG``) before one is made."""

    def __init__(self, tracking_uri: str, served: bool = False, experiment: str = EXPERIMENT) -> None:
        """``served``: a new experiment keeps its artifacts under ``mlflow-artifacts:`` URIs, in the
        folder beside the SQLite store (``bench.results.mlflow_store``), so they move with it; else
        where the store puts them (MLflow's default is ./mlruns in the cwd)."""
        mlflow.set_tracking_uri(tracking_uri)
        self.client = StoreClient(tracking_uri)
        self.source = {**SOURCE_TAGS, **checkout_tags()}  # on every MLflow run
        found = self.client.get_experiment_by_name(experiment)
        self.experiment_id = (
            found.experiment_id
            if found
            else self.client.create_experiment(
                experiment, artifact_location=PROXIED_ROOT if served else None, tags=EXPERIMENT_KIND
            )
        )

    def find(self, key: str, finished: bool = False) -> str | None:
        """The id of the MLflow run tagged ``key``; with ``finished``, only once ``finish`` has closed
        it (one an interrupted driver left open is found by ``open`` and logged again, never skipped)."""
        where = f"tags.`{KEY_TAG}` = '{key}'" + (" and attributes.status = 'FINISHED'" if finished else "")
        mlflow_runs = self.client.search_runs([self.experiment_id], filter_string=where, max_results=1)
        return mlflow_runs[0].info.run_id if mlflow_runs else None

    def mlflow_run_keys(self) -> list[str]:
        """The key of every MLflow run of the experiment: one per grid, cell and seed, none twice."""
        mlflow_runs = self.client.search_runs([self.experiment_id], max_results=SEARCH_MAX_RESULTS_THRESHOLD)
        return [mlflow_run.data.tags[KEY_TAG] for mlflow_run in mlflow_runs]

    def open(self, key: str, name: str, parent: str | None = None, tags: Mapping[str, str] = {}) -> str:
        """The id of the MLflow run tagged ``key``, created (under the MLflow run ``parent``) if it
        does not exist yet."""
        found = self.find(key)
        if found:
            return found
        all_tags = {KEY_TAG: key, "mlflow.runName": name, **self.source, **tags}
        if parent:
            all_tags["mlflow.parentRunId"] = parent
        return cast(str, self.client.create_run(self.experiment_id, tags=all_tags, run_name=name).info.run_id)

    def log(
        self,
        mlflow_run_id: str,
        metrics: Mapping[str, float] = {},
        params: Mapping[str, object] = {},
        tags: Mapping[str, str] = {},
        artifacts: tuple[Path, ...] = (),
    ) -> None:
        now = int(time.time() * 1000)
        self.client.log_batch(
            mlflow_run_id,
            metrics=[Metric(mlflow_name(k), float(v), now, 0) for k, v in metrics.items()],
            params=[Param(k, str(v)) for k, v in params.items()],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        for path in artifacts:
            self.client.log_artifact(mlflow_run_id, str(path))

    def log_history(self, mlflow_run_id: str, name: str, values: list[tuple[int, float]]) -> None:
        """One metric's values by step (e.g. a member's loss per epoch)."""
        now = int(time.time() * 1000)
        self.client.log_batch(
            mlflow_run_id, metrics=[Metric(name, value, now, step) for step, value in values]
        )

    def adopt(self, mlflow_run_id: str, parent: str, tags: Mapping[str, str]) -> None:
        """Make the finished MLflow run a child of ``parent`` (MLflow's parent is a tag), with ``tags``."""
        for key, value in {"mlflow.parentRunId": parent, **tags}.items():
            self.client.set_tag(mlflow_run_id, key, value)

    def finish(self, mlflow_run_id: str) -> None:
        self.client.set_terminated(mlflow_run_id)

    def show_columns(self, metrics: list[str]) -> None:
        """Save the view of the experiment's MLflow runs table that ``experiment_url`` opens: the
        board's first ``metrics`` as columns (the latest grid's, one view per experiment)."""
        self.client.set_experiment_tag(self.experiment_id, VIEW_TAG, mlflow_runs_table_view(metrics))


def track(
    plan: "Plan",
    studies: "dict[Cell, Study]",
    results: pd.DataFrame,
    board: pd.DataFrame,
    files: tuple[Path, ...],
    searches: "list[SearchResult]",
    tracking_uri: str | None = None,
    experiment: str | None = None,
) -> None:
    """Log the grid to MLflow: what the store does not hold yet; a rerun of finished cells logs
    nothing. An MLflow run counts as held once finished, so one an interrupted driver left open is completed,
    never duplicated. ``files``: the grid's report files, the plot index last."""
    # Imported here: leaderboard reads this module's tags, and the plan imports the methods (torch).
    from rankuq.bench.planning.plan import content_key
    from rankuq.bench.results.leaderboard import metrics_of

    layout, spec = plan.layout, plan.spec
    uri = tracking_uri or layout.default_tracking_uri
    local = uri == layout.default_tracking_uri  # the run directory's own store
    tracker = Tracker(uri, served=local, experiment=experiment_name(experiment))
    grid_key = content_key("grid", spec.model_dump(mode="json"))
    names = metrics_of(board)
    grid_tags = {LEVEL_TAG: "grid", BASELINE_TAG: spec.baseline or "", METRICS_TAG: json.dumps(names)}
    changed = tracker.find(grid_key, finished=True) is None
    parent = tracker.open(grid_key, spec.name, tags=grid_tags)
    backbone = backbone_params(spec.model)
    tracker.show_columns(names)
    if changed:  # every validated setting, flattened (model.backbone, train.lr, methods.ensemble.M, …)
        atomic_write(layout.grid_file, yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False))
        files = (layout.grid_file, *files)
        tracker.log(parent, params={**flat(spec.model_dump(mode="json")), **backbone})
    for search in searches:
        _track_search(tracker, parent, content_key("search", grid_key, search.folder.name), search)
    plots = json.loads(files[-1].read_text())  # the plot index
    for row, summary in board.iterrows():
        condition, method = summary.condition, summary.method
        cells = [cell for cell in studies if (cell.condition, cell.method) == (condition, method)]
        study_keys = [studies[cell].key for cell in cells]
        metrics = cell_metrics(summary, names, len(cells))
        # Keyed by what it logs, not by the whole grid: a grid with a method added (a new grid run)
        # takes the cells it already logged under its run instead of logging them again, unless their
        # numbers changed (a p-value corrected over more tests, another baseline).
        cell_key = content_key("cell", spec.name, condition, method, study_keys, sorted(metrics.items()))
        logged = tracker.find(cell_key, finished=True) or tracker.find(
            content_key("cell", grid_key, condition, method, study_keys), finished=True
        )  # a store written before cells were keyed without the grid
        if logged:
            tracker.adopt(logged, parent, {ROW_TAG: str(row)})
            continue
        changed = True
        tags = {"method": method, "task": cells[0].task, "shift": condition}
        child = tracker.open(
            cell_key, f"{method} × {condition}", parent, {**tags, LEVEL_TAG: "cell", ROW_TAG: str(row)}
        )
        shown = {**tags, "backbone": backbone["model.backbone"]}  # params: the UI's columns
        seeds = results[(results.condition == condition) & (results.method == method)]
        for cell, values in zip(cells, seeds.to_dict("records"), strict=True):
            # Keyed by its cell too: two conditions with one test side share bm25's predictions.
            seed_key = content_key("seed", cell_key, cell.key)
            _track_seed(tracker, child, seed_key, plan, cell, values, studies[cell], tags, shown)
        own = [e["path"] for e in plots if (e["condition"], e["method"]) == (condition, method)]
        tracker.log(
            child,
            metrics=metrics,
            params={**shown, "seed": ",".join(str(cell.seed) for cell in cells), "seeds": len(cells)},
            artifacts=tuple(files[-1].parent / name for name in own),
        )
        tracker.finish(child)
    if changed:
        tracker.log(parent, artifacts=files)
        log_board(tracker, parent, spec.name, board)
    tracker.finish(parent)


def cell_metrics(summary: pd.Series, metrics: list[str], seeds: int) -> dict[str, float]:
    """A cell's board columns ("R@1 std" is logged as R_at_1_std, ``mlflow_name``): NaN values are
    left out, and so is the std of one seed, which the board writes as 0."""
    from rankuq.bench.results.leaderboard import board_columns

    columns = board_columns(metrics)
    return _finite(summary, columns if seeds > 1 else [c for c in columns if not c.endswith(" std")])


def log_board(tracker: Tracker, mlflow_run_id: str, name: str, board: pd.DataFrame) -> None:
    """The comparison one click away in the MLflow UI, on the grid's MLflow run: its description (the
    ``NOTE_TAG``) is the Markdown leaderboard, cut at a row where a tag's limit requires it, and the
    method × metric overview plot is a keyed image, which its own and the experiment's chart views
    show (MLflow keeps no server-side chart layout a client could save)."""
    from matplotlib.image import imread

    from rankuq.bench.plots import overview_png
    from rankuq.bench.results.boards import Board
    from rankuq.bench.results.leaderboard import metrics_of
    from rankuq.bench.results.rendering import paper_markdown

    text = paper_markdown(Board(name, board, ()))
    if len(text) > MAX_TAG_VAL_LENGTH:
        tail = "\n\n… cut here: the whole leaderboard is this run's artifact leaderboard.md\n"
        text = text[: MAX_TAG_VAL_LENGTH - len(tail)].rsplit("\n", 1)[0] + tail
    tracker.client.set_tag(mlflow_run_id, NOTE_TAG, text)
    overview = overview_png(board, metrics_of(board))
    if overview is not None:  # None: too many methods for one plot
        image = imread(io.BytesIO(overview), format="png")
        # Synchronous: the async path bypasses log_artifact, where StoreClient reaches served artifacts.
        tracker.client.log_image(mlflow_run_id, image, key=OVERVIEW_KEY, step=0, synchronous=True)


def _track_search(tracker: Tracker, parent: str, key: str, search: "SearchResult") -> None:
    """A search's MLflow run: the chosen values as params, the best dev metric, the trial table."""
    if tracker.find(key):
        return
    mlflow_run_id = tracker.open(key, f"search {search.name}", parent, {LEVEL_TAG: "search"})
    values = {f"dev {search.metric}": search.score, "trials": search.trials, "stopped early": search.stopped}
    tracker.log(mlflow_run_id, metrics=values, params=search.best, artifacts=(search.folder / TRIALS_FILE,))
    tracker.finish(mlflow_run_id)


def _track_seed(
    tracker: Tracker,
    parent: str,
    key: str,
    plan: "Plan",
    cell: "Cell",
    row: dict[Hashable, Any],
    study: "Study",
    tags: dict[str, str],
    shown: dict[str, str],
) -> None:
    """A seed's MLflow run: its leaderboard metrics, every probe metric, its plots, and the probes' notes."""
    from rankuq.bench.planning.plan import tuned
    from rankuq.bench.results.leaderboard import LEADERBOARD_METRICS

    if tracker.find(key, finished=True):  # logged before the driver was interrupted
        return
    seed_mlflow_run = tracker.open(
        key, cell.label(), parent, {**tags, LEVEL_TAG: "seed", "seed": str(cell.seed)}
    )
    method_params = tuned(plan.spec, plan.params, cell.method, dict(cell.tuned)).params.model_dump()
    params = {**shown, "seed": cell.seed, **method_params, **study.searched}
    # The board's columns come from its row alone: a probe's value of one the row leaves undefined
    # (BM25's ERCE of raw scores) is not logged either.
    probes = {k: v for k, v in _finite(study.metrics, study.metrics).items() if k not in LEADERBOARD_METRICS}
    values = {**probes, **_finite(row, LEADERBOARD_METRICS)}
    notes = {"rankuq.notes": "\n".join(study.notes)[:5000]} if study.notes else {}
    predictions = plan.layout.predictions(cell.task, cell.method, cell.seed, cell.key)
    tracker.log(
        seed_mlflow_run, metrics=values, params=params, tags=notes, artifacts=(*study.plots, predictions)
    )
    for member, key in enumerate(cell.members):  # each member's loss (and dev value) per epoch, step = epoch
        suffix = "" if member == 0 else f"_member_{member}"
        for name, history in member_histories(plan.layout.training_file(key)).items():
            tracker.log_history(seed_mlflow_run, f"{name}{suffix}", history)
    tracker.finish(seed_mlflow_run)


def _finite(row: Mapping[Any, Any] | pd.Series, names: Iterable[str]) -> dict[str, float]:
    return {n: float(row[n]) for n in names if n in row and np.isfinite(row[n])}


def flat(values: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """Nested settings as dotted MLflow params: {"train": {"lr": 1e-4}} → {"train.lr": 1e-4}."""
    out: dict[str, object] = {}
    for key, value in values.items():
        if isinstance(value, Mapping) and value:
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def experiment_page(tracking_uri: str, experiment: str | None = None) -> str | None:
    """Where to see the grid in MLflow's UI: the experiment's runs table at an http(s) tracking
    server; for a SQLite store, the command that serves it and the page it then shows; None when
    the experiment does not exist."""
    found = StoreClient(tracking_uri).get_experiment_by_name(experiment_name(experiment))
    if found is None:
        return None
    if tracking_uri.startswith(("http://", "https://")):
        return experiment_url(tracking_uri, found.experiment_id)
    page = experiment_url("http://127.0.0.1:5000", found.experiment_id)
    return f"`{shlex.join(ui_command(tracking_uri))}`, then {page}"


def ui_command(tracking_uri: str) -> list[str]:
    """The command that serves a store's MLflow runs and their artifacts in MLflow's UI: for a SQLite
    store, the ``mlflow-artifacts:`` ones from the folder beside it, wherever it was moved."""
    served = artifacts_destination(tracking_uri)
    folder = ["--artifacts-destination", str(served)] if served else []
    return ["mlflow", "ui", "--backend-store-uri", tracking_uri, *folder]


def backbone_params(model: "ModelConfig") -> dict[str, str]:
    """The backbone a grid used, by name and folder (``model.backbone`` is None for the default)."""
    from rankuq.backbone import TINY, offline_minilm

    if model.backbone in (None, TINY):  # tiny: a random BERT with MiniLM's tokenizer
        return {
            "model.backbone": model.backbone or "all-MiniLM-L6-v2",
            "model.backbone_path": str(offline_minilm()),
        }
    path = Path(model.backbone).expanduser()
    folder = {"model.backbone_path": str(path.resolve())} if path.exists() else {}  # else a hub name
    return {"model.backbone": model.backbone, **folder}


def checkout_tags() -> dict[str, str]:
    """Tags saying which rankuq logged an MLflow run: its version and, from a git checkout, the commit."""
    tags = {"rankuq.version": version.__version__}
    source = Path(version.__file__).resolve().parents[1]  # the checkout holding rankuq/
    try:
        done = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return tags
    if done.returncode == 0:
        tags["mlflow.source.git.commit"] = done.stdout.strip()
    return tags


def member_histories(training_file: Path) -> dict[str, list[tuple[int, float]]]:
    """A trained member's values per epoch, from its training.json: ``train_loss`` (the mean step
    loss) and, with early stopping, its dev metric (``dev_AP``…); empty for older members."""
    if not training_file.is_file():
        return {}
    record = json.loads(training_file.read_text())
    series = {"train_loss": record.get("epoch_losses", [])}
    series |= {name: values for name, values in record.items() if name.startswith("dev_")}
    return {
        name: [(epoch, float(value)) for epoch, value in enumerate(values, start=1)]
        for name, values in series.items()
        if values
    }
