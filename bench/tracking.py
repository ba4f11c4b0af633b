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

import time
from collections.abc import Mapping
from pathlib import Path

import mlflow
from mlflow.entities import Metric, Param, RunTag
from mlflow.store.tracking import SEARCH_MAX_RESULTS_THRESHOLD
from mlflow.tracking import MlflowClient

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
