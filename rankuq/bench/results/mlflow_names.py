"""The names rankuq gives things in MLflow: MLflow run tags, the experiment, metric keys, the page to open."""

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
# A view of the MLflow runs table saved in the experiment, as the UI's own "Share" does: which MLflow
# runs, in which order, with which columns (the UI hides every metric column until one is picked, and
# nests the cells under their collapsed grid's MLflow run). The URL names it by ``viewStateShareKey``.
VIEW_KEY = "rankuq"
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
HEADLINE_METRICS = 5  # metric columns shown: VIEW_METRICS first, then the board's own order
# Ranking, calibration, and the uncertainty's use: what a board compares. MLflow orders metric columns
# by name and shows about three at 1400 px: AP, ECE and R_at_1 come first (Brier and ERCE, which would
# sort before R_at_1, are one click away in the column picker).
VIEW_METRICS = ("AP", "R@1", "ECE", "nDCG@10", "nAUC AP u_max")
# The run name says method and condition too, but a column can be sorted and filtered.
VIEW_PARAMS = ("method", "shift", "task", "seed", "backbone")
NOTE_TAG = "mlflow.note.content"  # an MLflow run's description: Markdown, shown on its page in the MLflow UI
OVERVIEW_KEY = (
    "leaderboard"  # the grid's MLflow run's overview image (``log_image`` key): the chart view shows it
)


def experiment_name(name: str | None = None) -> str:
    """The experiment a grid is logged to: ``name``, else $MLFLOW_EXPERIMENT_NAME, else "rankuq"."""
    return name or os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT


def mlflow_name(column: str) -> str:
    """MLflow metric names cannot hold '@'; keys without spaces are easier to query:
    R@1 → R_at_1, 'R@1 std' → R_at_1_std, 'nAUC AP u_max' → nAUC_AP_u_max."""
    return column.replace("@", "_at_").replace(" ", "_")


def mlflow_runs_table_view(metrics: list[str]) -> str:
    """The saved view of the experiment's MLflow runs table (``VIEW_TAG``'s value): the cells' MLflow
    runs as top-level rows, by condition (sorted by anything but creation time, MLflow does not fold
    them under their collapsed grid's MLflow run, even when filtered), with ``VIEW_PARAMS`` and
    ``HEADLINE_METRICS`` of the board's ``metrics`` (names as on the board: R@1, ERCE, …) as columns,
    calibration among them. MLflow orders the metric columns by name: AP, ECE, R_at_1 come first,
    visible at 1400 px beside its side panels."""
    shown = [m for m in VIEW_METRICS if m in metrics]
    shown += [m for m in metrics if m not in shown][: max(HEADLINE_METRICS - len(shown), 0)]
    columns = [f"params.`{name}`" for name in VIEW_PARAMS]
    columns += [f"metrics.`{mlflow_name(name)}`" for name in shown]
    return json.dumps(
        {
            "searchFilter": f"tags.`{LEVEL_TAG}` = 'cell'",
            "orderByKey": f"params.`{VIEW_PARAMS[1]}`",  # the board's grouping: by condition
            "orderByAsc": True,
            "selectedColumns": columns,
        }
    )


def experiment_url(server: str, experiment_id: str) -> str:
    """The experiment's MLflow runs table with the headline metric columns in MLflow's UI at ``server``
    (the UI would otherwise open on its GenAI overview)."""
    query = f"workflowType=machine_learning&viewStateShareKey={VIEW_KEY}"
    return f"{server.rstrip('/')}/#/experiments/{experiment_id}/runs?{query}"
