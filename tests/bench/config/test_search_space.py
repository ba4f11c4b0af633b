"""The grid's search: section: each key and domain checked against the field it sets, one clear error
naming the key; a space becomes Tune domains drawing what the fields take."""

import numpy as np
import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.config.search_space import SearchConfig, tuned_section
from rankuq.errors import RankuqError

BASE = {"tasks": ["wikiqa"], "methods": {"bert": {}, "gpf": {}, "mc_dropout": {}}}
LR = {"loguniform": [1.0e-5, 1.0e-3]}


def grid_with(search: dict, **more: object) -> dict:
    return {**BASE, **more, "search": search}


@pytest.mark.parametrize(
    ("search", "match"),
    [
        (
            {"space": {"train.lrr": LR}},
            r"grid.yaml: search.space.train.lrr: unknown key; searchable keys: train.batch_size, train.lr, "
            r".*model.dropout.*risk.b, .*gpf.gamma",
        ),
        (
            {"space": {"train.lr": {"log_uniform": [1.0e-5, 1.0e-3]}}},
            r"search.space.train.lr: unknown domain 'log_uniform'; valid domains: .*\{loguniform: \[lower",
        ),
        (
            {"space": {"sngp.c": {"uniform": [0.5, 1.0]}}},
            r"search.space.sngp.c: sngp is not one of the grid's methods \['bert', 'gpf', 'mc_dropout'\]",
        ),
        (
            {"space": {"model.backbone": {"uniform": [0, 1]}}},
            r"search.space.model.backbone: uniform draws numbers but model.backbone is not a number; use ch",
        ),
        (
            {"space": {"train.batch_size": {"uniform": [8, 32]}}},
            r"train.batch_size is an integer; use randint",
        ),
        (
            {"space": {"mc_dropout.T": {"randint": [2, 10]}}},
            r"mc_dropout.T does not change what mc_dropout trains",
        ),
        (
            {"space": {"train.epochs": {"randint": [1, 4]}}},
            r"train.epochs: the epochs are the scheduler's time axis",
        ),
        (
            {"space": {"model.dropout": {"uniform": [0.1, 1.0]}}},
            r"search.space.model.dropout: 1.0 is not a valid value: Input should be less than 1",
        ),
        (
            {"space": {"gpf.gamma": {"choice": [0.0, -1.0]}}},
            r"gpf.gamma: -1.0 is not a valid value: Input should be greater than or equal to 0",
        ),
        ({"space": {"train.lr": {"uniform": [1.0e-3]}}}, r"uniform takes \[lower, upper\], got \[0.001\]"),
        ({"space": {"train.lr": 0.001}}, r"search.space.train.lr: a search domain is one mapping, one of"),
        (
            {"space": {"train.lr": {"loguniform": [0, 1.0e-3]}}},
            r"LogUniform requires a lower bound greater than 0",
        ),
        ({"space": {"train.lr": {"uniform": [1.0e-3, 1.0e-5]}}}, r"uniform needs lower < upper"),
        (  # the trials' AdamW overflowed while the search went on: bounded as train.lr itself is
            {"space": {"train.lr": {"loguniform": [1.0e-300, 1.0e300]}}},
            r"search.space.train.lr: 1e\+300 is not a valid value: Input should be less than or equal to 1$",
        ),
        (
            {"space": {"gpf.gamma": {"uniform": [0.0, float("nan")]}}},
            r"search.space.gpf.gamma: uniform takes finite numbers, got \[0.0, nan\]",
        ),
        ({"metric": "R@", "space": {"train.lr": LR}}, r"search.metric: metric 'R@': the cutoff must be"),
        (
            {"metric": "ECE", "space": {"risk.b": {"uniform": [0, 2]}}},
            r"b reorders candidates, which ECE does not",
        ),
        (
            {"metric": "Brier", "space": {"risk.b": {"uniform": [0, 2]}}},
            r"b reorders candidates, which Brier does not",
        ),
        (
            {"metric": "ERCE", "space": {"train.lr": LR}},
            r"search.metric: metric 'ERCE' is measured by the calibration probe",
        ),
        (
            {"metrc": "R@1", "space": {"train.lr": LR}},
            r"search.metrc: unknown key; valid keys here: algorithm, metric",
        ),
        (
            {"algorithm": "bohb", "space": {"train.lr": LR}},
            r"search.algorithm: Input should be 'random' or 'optuna'",
        ),
        ({"space": {}}, r"search.space: Dictionary should have at least 1 item"),
        (
            {"scheduler": {"grace_period": 3}, "space": {"train.lr": LR}},
            r"search.scheduler.grace_period: 3 is more than train.epochs \(1\), so ASHA could stop no trial",
        ),
    ],
)
def test_bad_searches_are_one_clear_error_naming_the_key(search, match):
    with pytest.raises(RankuqError, match=match):
        parse_grid(grid_with(search), "grid.yaml")


@pytest.mark.parametrize(
    ("more", "match"),
    [
        ({"eval": {"probes": ["calibration"]}}, r"search.space.risk.b: .*add risk to eval.probes"),
        ({"eval": {"dev_split": None}}, r"search.space.risk.b: .*set eval.dev_split"),
    ],
)
def test_searching_b_needs_the_risk_probe_and_a_dev_split(more, match):
    with pytest.raises(RankuqError, match=match):
        parse_grid(grid_with({"space": {"risk.b": {"uniform": [0, 2]}}}, **more), "grid.yaml")


def test_training_searches_need_a_dev_split():
    with pytest.raises(
        RankuqError, match=r"search.space: trials are scored on the dev split; set eval.dev_split"
    ):
        parse_grid(grid_with({"space": {"train.lr": LR}}, eval={"dev_split": None}), "grid.yaml")


def test_a_space_becomes_tune_domains_drawing_what_the_fields_take():
    space = {
        "train.lr": LR,
        "train.batch_size": {"randint": [8, 33]},
        "model.dropout": {"quniform": [0.05, 0.3, 0.05]},
        "gpf.gamma": {"choice": [0.0, 1.0, 2.0, 5.0]},
        "risk.b": {"uniform": [0.0, 2.0]},
    }
    spec, _ = parse_grid(grid_with({"space": space}), "grid.yaml")
    search = spec.search
    assert search.mode == "max" and search.keys_for("gpf") == list(space)[:4]
    assert search.keys_for("bert") == list(space)[:3] and search.training_keys() == list(space)[:4]
    draws = {key: domain.sample(size=200) for key, domain in search.domains(list(space)).items()}
    assert all(1.0e-5 <= lr < 1.0e-3 for lr in draws["train.lr"])
    assert set(draws["train.batch_size"]) <= set(range(8, 33)) and len(set(draws["train.batch_size"])) > 10
    assert all(size == int(size) for size in draws["train.batch_size"])
    dropout = np.array(draws["model.dropout"])
    np.testing.assert_allclose(np.round(dropout / 0.05) * 0.05, dropout)  # steps of q = 0.05
    assert dropout.min() >= 0.05 and dropout.max() <= 0.3 + 1e-9
    assert set(draws["gpf.gamma"]) == {0.0, 1.0, 2.0, 5.0}
    for metric in ("ECE", "ECE.all", "Brier", "NLL"):  # Brier and NLL were maximised before issue 49
        lower, _ = parse_grid(grid_with({"metric": metric, "space": {"train.lr": LR}}), "grid.yaml")
        assert lower.search.mode == "min", metric
    for metric in ("AP", "nDCG@10", "RR@10"):  # a ranking metric, ir-measures' too
        higher, _ = parse_grid(grid_with({"metric": metric, "space": {"train.lr": LR}}), "grid.yaml")
        assert higher.search.mode == "max", metric
    seeking, _ = parse_grid(grid_with({"space": {"risk.b": {"uniform": [-1.0, 1.0]}}}), "grid.yaml")
    assert all(-1 <= b <= 1 for b in seeking.search.domains(["risk.b"])["risk.b"].sample(size=50))


def test_a_chosen_setting_sets_only_its_own_section():
    chosen = {"train.lr": 3e-3, "model.dropout": 0.2, "risk.b": 1.5}
    assert tuned_section("train", {"lr": 1e-5, "epochs": 2}, chosen) == {"lr": 3e-3, "epochs": 2}
    assert tuned_section("model", {"dropout": 0.1}, chosen) == {"dropout": 0.2}
    assert tuned_section("gpf", {"gamma": 2.0}, chosen) == {"gamma": 2.0}


def test_a_search_s_cache_key_holds_the_settings_and_only_the_searched_keys_domains():
    search = SearchConfig(space={"train.lr": LR, "risk.b": {"uniform": [0.0, 2.0]}})
    identity = search.identity(["train.lr"])
    assert identity["space"] == {"train.lr": LR}
    assert (identity["metric"], identity["num_samples"], identity["algorithm"]) == ("R@1", 8, "random")
    assert identity["scheduler"] == {"name": "asha", "grace_period": 1, "reduction_factor": 2.0}
    assert search.training_keys() == ["train.lr"] and search.mode == "max"
