"""The names rankuq gives things in MLflow: metric keys MLflow accepts, and the experiment a grid goes to."""

import re

import pytest

from rankuq.bench.results.mlflow_names import EXPERIMENT, experiment_name, mlflow_name

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
