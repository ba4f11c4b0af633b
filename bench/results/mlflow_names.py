"""The names rankuq gives things in MLflow: run tags, the experiment, metric keys."""

import os

KEY_TAG = "rankuq.key"
LEVEL_TAG = "rankuq.level"
BASELINE_TAG = "rankuq.baseline"
METRICS_TAG = "rankuq.metrics"
ROW_TAG = "rankuq.row"
EXPERIMENT = "rankuq"  # unless --experiment or $MLFLOW_EXPERIMENT_NAME names another
# The MLflow UI opens an experiment of this kind on its runs (not on the GenAI traces overview).
EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}
NOTE_TAG = "mlflow.note.content"  # a run's description: Markdown, shown on its page in the MLflow UI
OVERVIEW_KEY = "leaderboard"  # the grid run's overview image (``log_image`` key): the chart view shows it


def experiment_name(name: str | None = None) -> str:
    """The experiment a grid is logged to: ``name``, else $MLFLOW_EXPERIMENT_NAME, else "rankuq"."""
    return name or os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT


def mlflow_name(column: str) -> str:
    """MLflow metric names cannot hold '@'; keys without spaces are easier to query:
    R@1 → R_at_1, 'R@1 std' → R_at_1_std, 'nAUC AP u_max' → nAUC_AP_u_max."""
    return column.replace("@", "_at_").replace(" ", "_")
