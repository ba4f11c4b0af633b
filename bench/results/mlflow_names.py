"""The names rankuq gives things in MLflow: run tags, the experiment, metric keys, the page to open."""

import json
import os

KEY_TAG = "rankuq.key"
LEVEL_TAG = "rankuq.level"
BASELINE_TAG = "rankuq.baseline"
METRICS_TAG = "rankuq.metrics"
ROW_TAG = "rankuq.row"
EXPERIMENT = "rankuq"  # unless --experiment or $MLFLOW_EXPERIMENT_NAME names another
# The experiment's type, as MLflow's experiment list labels it. MLflow 3.17's UI does not read it to
# pick the page an experiment opens on: that is the URL's workflowType, else the browser's last
# choice (genai by default), hence ``experiment_url``.
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
# What the runs table's Source and Version columns show (mlflow.source.git.commit is the version).
SOURCE_TAGS = {"mlflow.source.name": "rankuq", "mlflow.source.type": "LOCAL"}
# A view of the runs table saved in the experiment, as the UI's own "Share" does: the columns to show
# (the UI hides every metric column until one is picked). The URL names it by ``viewStateShareKey``.
VIEW_KEY = "rankuq"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
HEADLINE_METRICS = 6  # the board's first metrics shown as columns
NOTE_TAG = "mlflow.note.content"  # a run's description: Markdown, shown on its page in the MLflow UI
OVERVIEW_KEY = "leaderboard"  # the grid run's overview image (``log_image`` key): the chart view shows it


def experiment_name(name: str | None = None) -> str:
    """The experiment a grid is logged to: ``name``, else $MLFLOW_EXPERIMENT_NAME, else "rankuq"."""
    return name or os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT


def mlflow_name(column: str) -> str:
    """MLflow metric names cannot hold '@'; keys without spaces are easier to query:
    R@1 → R_at_1, 'R@1 std' → R_at_1_std, 'nAUC AP u_max' → nAUC_AP_u_max."""
    return column.replace("@", "_at_").replace(" ", "_")


def runs_view(metrics: list[str]) -> str:
    """The shared view (``VIEW_TAG``'s value): MLflow's default columns and the first
    ``HEADLINE_METRICS`` of the board's ``metrics`` (names as on the board: R@1, ERCE, …)."""
    columns = ["attributes.`Source`", "attributes.`Models`", "attributes.`Dataset`"]
    columns += [f"metrics.`{mlflow_name(name)}`" for name in metrics[:HEADLINE_METRICS]]
    return json.dumps({"selectedColumns": columns})


def experiment_url(server: str, experiment_id: str) -> str:
    """The experiment's runs table with the headline metric columns in MLflow's UI at ``server``
    (the UI would otherwise open on its GenAI overview)."""
    query = f"workflowType=machine_learning&viewStateShareKey={VIEW_KEY}"
    return f"{server.rstrip('/')}/#/experiments/{experiment_id}/runs?{query}"
