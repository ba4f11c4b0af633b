"""A grid's training settings: defaults as paper 000 trains, early stopping on a ranking metric and
out of every member's content key when unset."""

import re

import pytest
from pydantic import ValidationError

from rankuq.bench.config.training import EarlyStopping, TrainConfig


def test_unset_early_stopping_is_left_out_of_the_settings_a_key_hashes():
    plain = TrainConfig().model_dump()
    assert plain == {
        "epochs": 1,
        "batch_size": 16,
        "lr": 5e-5,
        "warmup": 0.1,
        "max_queries": None,
        "negatives": 1,
        "ns": "bm25",
    }  # the keys members had before early stopping existed: their cache stays valid
    stopping = TrainConfig(early_stopping={"patience": 2}).model_dump()
    assert stopping == {**plain, "early_stopping": {"patience": 2, "metric": "AP"}}
    assert TrainConfig(**plain) == TrainConfig()  # what a job carries reads back as the same settings


def test_fp32_training_is_left_out_of_the_settings_a_key_hashes_and_bf16_is_in():
    plain = TrainConfig().model_dump()
    assert "precision" not in plain  # fp32 grids keep their members' keys
    assert TrainConfig(precision="bf16").model_dump() == {**plain, "precision": "bf16"}
    assert TrainConfig(**TrainConfig(precision="bf16").model_dump()).precision == "bf16"


@pytest.mark.parametrize("metric", ["AP", "nDCG@10", "R@1", "RR"])
def test_early_stopping_maximises_a_ranking_metric(metric):
    assert EarlyStopping(patience=1, metric=metric).metric == metric


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"patience": 1, "metric": "ERCE"}, "ERCE' is measured by the calibration probe"),
        ({"patience": 1, "metric": "AP@"}, "metric 'AP@': the cutoff must be a positive integer"),
        ({"patience": 0}, "Input should be greater than or equal to 1"),
        ({"patience": 1, "min_epochs": 0}, "Input should be greater than or equal to 1"),
        ({"patience": 1, "metrc": "AP"}, "Extra inputs are not permitted"),
    ],
)
def test_bad_early_stopping_is_refused(values, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        EarlyStopping(**values)


def test_min_epochs_is_left_out_of_the_key_when_unset_and_in_it_when_set():
    plain = TrainConfig(early_stopping={"patience": 2}).model_dump()
    assert "min_epochs" not in plain["early_stopping"]  # gp's and paper000's members keep their keys
    held = TrainConfig(early_stopping={"patience": 2, "min_epochs": 4}).model_dump()
    assert held["early_stopping"] == {"patience": 2, "metric": "AP", "min_epochs": 4}


def test_training_stops_after_patience_epochs_without_a_better_value_not_before_min_epochs():
    """gp's SemEval heads: dev AP falls after a barely trained first epoch, then rises once the
    output layer learns (issue 47): patience 2 alone stops at epoch 3, min_epochs 4 trains on."""
    falling = [0.40, 0.32, 0.38]
    assert EarlyStopping(patience=2).stops(falling, epoch=3, epochs=8)
    assert not EarlyStopping(patience=2, min_epochs=4).stops(falling, epoch=3, epochs=8)
    assert EarlyStopping(patience=2, min_epochs=4).stops([*falling, 0.39], epoch=4, epochs=8)
    assert not EarlyStopping(patience=2, min_epochs=4).stops([*falling, 0.45], epoch=4, epochs=8)
    assert not EarlyStopping(patience=1).stops([0.5, 0.4], epoch=2, epochs=2)  # the last epoch ends it anyway
    assert not EarlyStopping(patience=2).stops([0.3, 0.5, 0.4], epoch=3, epochs=8)  # one epoch without


def test_the_best_epoch_is_the_highest_dev_value_of_a_ranking_metric_the_first_on_ties():
    assert EarlyStopping(patience=1, metric="AP").best_epoch([0.3, 0.5, 0.2, 0.5]) == 1


@pytest.mark.parametrize("metric", ["ECE", "ECE.all", "Brier", "NLL"])
def test_the_best_epoch_of_a_metric_where_lower_is_better_is_its_lowest_dev_value(metric):
    """The comparison that decides "better" follows the metric's declared direction: such a metric was
    accepted and maximised before (issue 49), and the members' loop now keeps its lowest epoch."""
    stopping = EarlyStopping(patience=1, metric=metric)
    assert stopping.best_epoch([0.30, 0.12, 0.25, 0.12]) == 1
    assert stopping.best_epoch([0.1, 0.2, 0.3]) == 0


@pytest.mark.parametrize(
    ("values", "field"),
    [({"epochs": -1}, "epochs"), ({"warmup": 1.0}, "warmup"), ({"lr": 0}, "lr"), ({"ns": "dense2"}, "ns")],
)
def test_out_of_range_settings_are_refused_naming_the_field(values, field):
    with pytest.raises(ValidationError) as raised:
        TrainConfig(**values)
    assert raised.value.errors()[0]["loc"] == (field,)
