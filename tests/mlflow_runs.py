"""The MLflow runs a grid logged to its run directory's store, as the tests that read them back ask."""

from pathlib import Path

from mlflow.entities import Run as MlflowRun

from rankuq.bench.results.mlflow_names import EXPERIMENT, LEVEL_TAG
from rankuq.bench.results.mlflow_store import StoreClient, default_tracking_uri


def mlflow_runs(run_dir: Path, level: str | None = None, where: str = "") -> list[MlflowRun]:
    """The MLflow runs in ``run_dir``'s store at ``level`` (grid, cell, seed, search; None: every
    level) that also match ``where`` (an MLflow filter string, e.g. ``tags.method = 'bert'``)."""
    client = StoreClient(default_tracking_uri(run_dir))
    found = client.get_experiment_by_name(EXPERIMENT)
    assert found is not None, EXPERIMENT
    conditions = [f"tags.`{LEVEL_TAG}` = '{level}'"] * (level is not None) + [where] * bool(where)
    return client.search_runs([found.experiment_id], " and ".join(conditions), max_results=1000)
