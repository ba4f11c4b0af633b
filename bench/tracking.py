"""MLflow leaderboard store: one parent run per grid, a child per cell, a grandchild per seed.

Runs carry a ``rankuq.key`` content-hash tag, so a rerun finds them instead of adding new ones.
Only the driver writes (a single SQLite writer avoids "database is locked").

What `rankuq leaderboard --tracking-uri` reads back (``bench.leaderboard.read_tracking``):

- grid run: tags ``rankuq.level=grid``, ``rankuq.baseline`` (the baseline method) and
  ``rankuq.metrics`` (JSON list of the board's metric names, in column order: MLflow keys cannot
  be turned back into names such as ``nAUC AP u_max``); run name = grid name; artifact
  ``index.json`` (the plot index of ``RUN_DIR/plots``);
- cell runs (``mlflow.parentRunId`` = the grid run): tags ``rankuq.level=cell``, ``method``,
  ``task``, ``shift`` (the condition) and ``rankuq.row`` (the row in leaderboard.csv, so the board
  keeps its order); param ``seeds``; metrics ``mlflow_name(column)`` of the board's columns
  ``M``, ``M std`` and ``M p`` (``R_at_1``, ``R_at_1_std``, ``R_at_1_p``; NaN values are not
  logged); the plot files of index.json as artifacts under their index names.

Search runs (``bench.search``, under the grid run) carry ``rankuq.level=search``, the chosen values
as params (``train.lr``, ``risk.b``), metrics ``dev_<metric>``, ``trials`` and ``stopped_early``,
and the trial table ``trials.csv``; seed runs log the searched values they used as params.
"""

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

import mlflow
import mlflow.store
from alembic.script import ScriptDirectory
from mlflow.entities import Metric, Param, RunTag
from mlflow.store.tracking import SEARCH_MAX_RESULTS_THRESHOLD
from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
from mlflow.tracking import MlflowClient

from rankuq.bench.preflight import sqlite_path, store_problem
from rankuq.errors import RankuqError

KEY_TAG = "rankuq.key"
LEVEL_TAG = "rankuq.level"
BASELINE_TAG = "rankuq.baseline"
METRICS_TAG = "rankuq.metrics"
ROW_TAG = "rankuq.row"
PLOT_INDEX = "index.json"
EXPERIMENT = "rankuq"


def mlflow_name(column: str) -> str:
    """MLflow metric names cannot hold '@'; keys without spaces are easier to query:
    R@1 → R_at_1, 'R@1 std' → R_at_1_std, 'nAUC AP u_max' → nAUC_AP_u_max."""
    return column.replace("@", "_at_").replace(" ", "_")


def default_tracking_uri(run_dir: Path) -> str:
    return f"sqlite:///{(run_dir / 'mlflow.db').resolve()}"


def prepare_store(uri: str, owned: bool) -> None:
    """Make a SQLite store usable before the run logs to it.

    An absent store is created and migrated under a temporary name, then renamed: a driver killed
    while MLflow builds its tables (a few hundred ms) leaves no half-migrated store. A broken store
    ``owned`` by the run directory (the default ``RUN_DIR/mlflow.db``) is moved aside with one warning
    and made anew (the rerun logs the finished cells again); anyone else's is refused, untouched."""
    path = sqlite_path(uri)
    if path is None:
        return
    problem = store_problem(path, read_only=not owned) or _schema_problem(path)
    if problem and not owned:
        raise RankuqError(
            f"tracking URI {uri}: {path} {problem}; it is left as it is: give a sound store or a new path "
            f"(an older MLflow's store is updated by `mlflow db upgrade {uri}`)"
        )
    if problem:
        aside = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(path, aside)
        logging.getLogger(__name__).warning(
            "%s %s: moved to %s, and a new store is made (finished cells are logged again)",
            path,
            problem,
            aside.name,
        )
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f".{path.name}.tmp-*"):  # what a killed creation left
            stale.unlink()
        # A new name each time: MLflow caches an engine (and its open connections) per URI.
        staging = path.with_name(f".{path.name}.tmp-{os.getpid()}-{time.time_ns()}").resolve()
        store = SqlAlchemyStore(f"sqlite:///{staging}", (path.parent / "mlartifacts").resolve().as_uri())
        store.engine.dispose()
        os.replace(staging, path)


def _schema_problem(path: Path) -> str | None:
    """A store whose schema is not this MLflow's head revision: left half-migrated, or written by
    another MLflow version (which ``mlflow db upgrade`` would update)."""
    if not path.exists():
        return None
    head = ScriptDirectory(str(Path(mlflow.store.__file__).parent / "db_migrations")).get_current_head()
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            found = [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]
    except sqlite3.Error as error:
        return f"has no readable MLflow schema revision ({error})"
    if found != [head]:
        return f"has MLflow schema revision {found}, this MLflow expects {head} (half-migrated or older)"
    return None


class Tracker:
    def __init__(
        self, tracking_uri: str, artifacts: Path | None = None, experiment: str = EXPERIMENT
    ) -> None:
        """``artifacts``: where a local store keeps artifacts (MLflow's default is ./mlruns in the cwd)."""
        mlflow.set_tracking_uri(tracking_uri)
        self.client = MlflowClient(tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        self.experiment_id = (
            found.experiment_id
            if found
            else self.client.create_experiment(
                experiment, artifact_location=artifacts.resolve().as_uri() if artifacts else None
            )
        )

    def find(self, key: str, finished: bool = False) -> str | None:
        """The run tagged ``key``; with ``finished``, only once ``finish`` has closed it (a run an
        interrupted driver left open is found by ``open`` and logged again, never skipped)."""
        where = f"tags.`{KEY_TAG}` = '{key}'" + (" and attributes.status = 'FINISHED'" if finished else "")
        runs = self.client.search_runs([self.experiment_id], filter_string=where, max_results=1)
        return runs[0].info.run_id if runs else None

    def run_keys(self) -> list[str]:
        """The key of every run of the experiment: one per grid, cell and seed, none twice."""
        runs = self.client.search_runs([self.experiment_id], max_results=SEARCH_MAX_RESULTS_THRESHOLD)
        return [run.data.tags[KEY_TAG] for run in runs]

    def open(self, key: str, name: str, parent: str | None = None, tags: Mapping[str, str] = {}) -> str:
        """The run tagged ``key``, created (under ``parent``) if it does not exist yet."""
        found = self.find(key)
        if found:
            return found
        all_tags = {KEY_TAG: key, "mlflow.runName": name, **tags}
        if parent:
            all_tags["mlflow.parentRunId"] = parent
        return self.client.create_run(self.experiment_id, tags=all_tags, run_name=name).info.run_id

    def log(
        self,
        run_id: str,
        metrics: Mapping[str, float] = {},
        params: Mapping[str, object] = {},
        tags: Mapping[str, str] = {},
        artifacts: tuple[Path, ...] = (),
    ) -> None:
        now = int(time.time() * 1000)
        self.client.log_batch(
            run_id,
            metrics=[Metric(mlflow_name(k), float(v), now, 0) for k, v in metrics.items()],
            params=[Param(k, str(v)) for k, v in params.items()],
            tags=[RunTag(k, v) for k, v in tags.items()],
        )
        for path in artifacts:
            self.client.log_artifact(run_id, str(path))

    def finish(self, run_id: str) -> None:
        self.client.set_terminated(run_id)
