"""The names rankuq gives things in MLflow: metric keys MLflow accepts, and the experiment a grid goes to."""

import json
import re

import pytest

from rankuq.bench.results.mlflow_names import (
    EXPERIMENT,
    experiment_name,
    experiment_url,
    mlflow_name,
    mlflow_runs_table_view,
)

# MLflow: "Names may only contain alphanumerics, underscores, dashes, periods, spaces, colon and slashes".
VALID = re.compile(r"[\w\-. :/]+")


@pytest.mark.parametrize(
    ("column", "name"),
    [
        ("R@1", "R_at_1"),
        ("R@1 std", "R_at_1_std"),
        ("nDCG@10 std", "nDCG_at_10_std"),
        ("nAUC AP u_max p", "nAUC_AP_u_max_p"),
        ("nAUC AP u_max", "nAUC_AP_u_max"),
        ("RA.nDCG@10", "RA.nDCG_at_10"),
        ("ECE.all", "ECE.all"),
    ],
)
def test_metric_columns_become_names_mlflow_accepts(column, name):
    assert mlflow_name(column) == name and VALID.fullmatch(name)


def test_the_experiment_is_the_option_else_the_environment_else_rankuq(monkeypatch):
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    assert experiment_name() == EXPERIMENT == "rankuq"
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "team-runs")
    assert experiment_name() == "team-runs"
    assert experiment_name("mine") == "mine"
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "")  # set but empty: the default
    assert experiment_name() == "rankuq"


def test_the_mlflow_runs_table_view_lists_the_cells_with_ap_r1_and_ece_among_five_metric_columns():
    board = ["R@1", "R@5", "P@1", "AP", "RR", "nDCG@10", "ECE", "ECE.all", "ERCE", "Brier", "nAUC AP u_max"]
    view = json.loads(mlflow_runs_table_view(board))
    assert view["selectedColumns"] == [
        *("params.`method`", "params.`shift`", "params.`task`", "params.`seed`", "params.`backbone`"),
        *(
            "metrics.`AP`",
            "metrics.`R_at_1`",
            "metrics.`ECE`",
            "metrics.`nDCG_at_10`",
            "metrics.`nAUC_AP_u_max`",
        ),
    ]
    # MLflow sorts metric columns by name: the three it shows at 1400 px are AP, ECE and R_at_1
    shown = sorted(c for c in view["selectedColumns"] if c.startswith("metrics"))
    assert shown[:3] == ["metrics.`AP`", "metrics.`ECE`", "metrics.`R_at_1`"]
    # Sorted by anything but creation time, MLflow does not fold the cells under their grid's MLflow run.
    assert view["searchFilter"] == "tags.`rankuq.level` = 'cell'"
    assert (view["orderByKey"], view["orderByAsc"]) == ("params.`shift`", True)  # by condition, not nested
    # A board without some of them: the others in its own order fill the six.
    columns = json.loads(mlflow_runs_table_view(["R@1", "ECE", "nAUC AP u_max", "a", "b", "c", "d"]))[
        "selectedColumns"
    ]
    assert [c for c in columns if c.startswith("metrics")] == [
        *("metrics.`R_at_1`", "metrics.`ECE`", "metrics.`nAUC_AP_u_max`", "metrics.`a`", "metrics.`b`"),
    ]


def test_the_experiment_url_opens_the_runs_table_with_the_saved_view():
    assert experiment_url("http://h:5000/", "7") == (
        "http://h:5000/#/experiments/7/runs?workflowType=machine_learning&viewStateShareKey=rankuq"
    )
