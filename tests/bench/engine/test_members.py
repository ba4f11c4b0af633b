"""Members trained with Ray: data-parallel (two Ray Train workers, gloo on CPU), with early stopping,
or in their own Tune trials. Scoring them is tests/bench/engine/test_scoring.py."""

import json
import shutil

import pytest
from mlflow.tracking import MlflowClient

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench.config.grid import parse_grid
from rankuq.bench.engine.scoring import (
    dev_metric,
)
from rankuq.bench.planning.plan import plan
from rankuq.bench.results.mlflow_names import EXPERIMENT
from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.run.runner import run_grid
from rankuq.bench.rundir.layout import TRAINING_FILE, RunLayout
from rankuq.errors import RankuqError

DATA_PARALLEL = {
    "tasks": ["wikiqa"],
    "methods": {"bert": {}},
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30},
    "eval": {"probes": [], "dev_split": None},
    "resources": {"workers_per_trial": 2, "cpus_per_trial": 1},
}


def test_a_member_trains_on_two_data_parallel_workers(ray_session, tmp_path):
    spec, params = parse_grid(DATA_PARALLEL, "test grid")
    board = run_grid(spec, params, tmp_path)
    assert board.set_index("method").loc["bert", "R@1"] > 0
    (member,) = (tmp_path / "models").iterdir()
    assert (member / "model.safetensors").stat().st_size > 0  # rank 0's checkpoint


EARLY_STOPPING = {
    "tasks": ["wikiqa"],
    "methods": {"bert": {}},
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30, "epochs": 4, "lr": 1e-3, "early_stopping": {"patience": 1}},
    "eval": {"probes": []},
}


def test_early_stopping_keeps_the_weights_of_the_best_dev_epoch(ray_session, tmp_path):
    spec, params = parse_grid(EARLY_STOPPING, "test grid")
    run_grid(spec, params, tmp_path)
    (job,) = plan(spec, params, RunLayout(tmp_path)).members.values()
    record = json.loads((tmp_path / "models" / job.key / TRAINING_FILE).read_text())
    history, best = record["dev_AP"], record["best_epoch"]
    assert history[best - 1] == max(history) and best == history.index(max(history)) + 1
    trained = len(history)
    assert record["stopped_early"] == (trained < 4) and record["epoch"] == trained
    if record["stopped_early"]:
        assert trained - best == 1  # patience 1: one epoch without a better value
    # The member kept is the best epoch's: scored again on the same dev lists, the same AP.
    method = methods.create("bert")
    model = method.build_model(ModelConfig(**job.model), job.seed)
    model.load_state_dict(method.member_state(model, tmp_path / "models" / job.key))
    kept = dev_metric(method, ModelConfig(**job.model), model, job.dev_shards, "AP", 512)()
    assert kept == pytest.approx(history[best - 1], abs=1e-9)
    # MLflow's seed run has the dev value of every epoch (step = epoch).
    client = MlflowClient(default_tracking_uri(tmp_path))
    experiment = client.get_experiment_by_name(EXPERIMENT).experiment_id
    (seed_run,) = client.search_runs([experiment], filter_string="tags.`rankuq.level` = 'seed'")
    logged = client.get_metric_history(seed_run.info.run_id, "dev_AP")
    assert sorted((m.step, m.value) for m in logged) == list(enumerate(history, start=1))


def test_members_trained_in_their_tune_trials_have_the_train_workers_weights(ray_session, tmp_path):
    # Two members one after the other: with trainer "trial" the second reuses the first's process.
    grid = {**DATA_PARALLEL, "methods": {"ensemble": {"M": 2}}, "train": {"max_queries": 30, "epochs": 2}}
    weights, processes = {}, {}
    for trainer in ("train", "trial"):
        resources = {"trainer": trainer, "cpus_per_trial": 1, "max_concurrent_trials": 1}
        run_grid(*parse_grid({**grid, "resources": resources}, "test grid"), tmp_path / trainer)
        members = sorted((tmp_path / trainer / "models").iterdir())
        weights[trainer] = {member.name: (member / "model.safetensors").read_bytes() for member in members}
        for member in members:
            record = json.loads((member / TRAINING_FILE).read_text())
            assert (record["epoch"], record["start_epoch"]) == (2, 0)
            processes.setdefault(trainer, set()).add(record["pid"])
            assert not (tmp_path / trainer / "ray" / member.name).exists()  # its checkpoints go once saved
    assert len(weights["trial"]) == 2 and weights["train"] == weights["trial"]  # same keys, same bytes
    assert len(processes["train"]) == 2 and len(processes["trial"]) == 1  # a Train worker each; one trial
    # A trial killed after its last epoch's checkpoint, before Tune saw it end: a rerun reports that
    # checkpoint again and trains nothing (the same training record, its times included).
    key = min(weights["trial"])
    finished = tmp_path / "trial" / "models" / key
    shutil.copytree(finished, tmp_path / "again" / "ray" / key / "epoch-2")
    resources = {"trainer": "trial", "cpus_per_trial": 1}
    run_grid(*parse_grid({**grid, "resources": resources}, "test grid"), tmp_path / "again")
    again = tmp_path / "again" / "models" / key
    assert (again / "model.safetensors").read_bytes() == weights["trial"][key]
    assert (again / TRAINING_FILE).read_text() == (finished / TRAINING_FILE).read_text()


def test_a_member_trained_in_its_tune_trial_takes_one_worker():
    grid = {**DATA_PARALLEL, "resources": {"workers_per_trial": 2, "trainer": "trial"}}
    with pytest.raises(RankuqError, match="trainer 'trial' trains a member in one process, but workers_per"):
        parse_grid(grid, "test grid")


@pytest.mark.parametrize("gpus", [0.5, 1, 3])
def test_data_parallel_workers_need_whole_gpus_each(gpus):
    grid = {**DATA_PARALLEL, "resources": {"workers_per_trial": 2, "gpus_per_trial": gpus}}
    with pytest.raises(
        RankuqError, match=rf"resources: gpus_per_trial {gpus:g} over workers_per_trial 2 gives"
    ):
        parse_grid(grid, "grid.yaml")


@pytest.mark.parametrize(("workers", "gpus"), [(2, 4), (2, 0), (1, 0.25)])
def test_whole_gpus_per_worker_or_a_fraction_for_one_worker_are_valid(workers, gpus):
    grid = {**DATA_PARALLEL, "resources": {"workers_per_trial": workers, "gpus_per_trial": gpus}}
    spec, _ = parse_grid(grid, "grid.yaml")
    assert (spec.resources.workers_per_trial, spec.resources.gpus_per_trial) == (workers, gpus)
