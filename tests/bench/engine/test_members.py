"""Members trained with Ray: data-parallel (two Ray Train workers, gloo on CPU), with early stopping,
or in their own Tune trials. Scoring them is tests/bench/engine/test_scoring.py."""

import json
import os
import shutil
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from rankuq import methods
from rankuq.bench.config.grid import parse_grid
from rankuq.bench.engine.scoring import (
    dev_metric,
)
from rankuq.bench.planning.plan import plan
from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.run.grid_run import GridRequest, grid_run
from rankuq.bench.rundir.layout import TRAINING_FILE, RunLayout
from rankuq.errors import RankuqError
from tests.mlflow_runs import mlflow_runs

DATA_PARALLEL = {
    "tasks": ["wikiqa"],
    "methods": {"bert": {}},
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30},
    "eval": {"probes": [], "dev_split": None},
    "resources": {"workers_per_trial": 2, "cpus_per_trial": 1},
}


@pytest.mark.slow  # a grid run on two Train workers (30 s); the quick suite trains on one
def test_a_member_trains_on_two_data_parallel_workers(ray_session, tmp_path):
    board = grid_run(GridRequest(DATA_PARALLEL, tmp_path, source="test grid")).board
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
    grid_run(GridRequest(EARLY_STOPPING, tmp_path, source="test grid"))
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
    model = method.build_model(job.model, job.seed)
    model.load_state_dict(method.member_state(model, tmp_path / "models" / job.key))
    kept = dev_metric(method, job.model, model, job.dev_shards, "AP", 512)()
    assert kept == pytest.approx(history[best - 1], abs=1e-9)
    # The seed's MLflow run has the dev value of every epoch (step = epoch).
    (seed,) = mlflow_runs(tmp_path, "seed")
    logged = MlflowClient(default_tracking_uri(tmp_path)).get_metric_history(seed.info.run_id, "dev_AP")
    assert sorted((m.step, m.value) for m in logged) == list(enumerate(history, start=1))


@pytest.mark.slow  # two grid runs, one per trainer (83 s); the quick suite trains through the tiny grid
def test_members_trained_in_their_tune_trials_have_the_train_workers_weights(ray_session, tmp_path):
    # Two members one after the other: with trainer "trial" the second reuses the first's process.
    grid = {**DATA_PARALLEL, "methods": {"ensemble": {"M": 2}}, "train": {"max_queries": 30, "epochs": 2}}
    weights, processes = {}, {}
    for trainer in ("train", "trial"):
        resources = {"trainer": trainer, "cpus_per_trial": 1, "max_concurrent_trials": 1}
        grid_run(GridRequest({**grid, "resources": resources}, tmp_path / trainer, source="test grid"))
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
    grid_run(GridRequest({**grid, "resources": resources}, tmp_path / "again", source="test grid"))
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


# A child process with its own Ray, whose workers refuse every member at the GPU-memory preflight
# (worker_process_setup_hook patches it before members.py imports it): what a card held by another
# process does. It prints the CLI's message and how many times each member was tried.
REFUSING = """
import json, os, sys
from pathlib import Path
import ray
from rankuq.bench.run.grid_run import GridRequest, grid_run
from rankuq.errors import RankuqError

def refuse():
    import rankuq.gpu_memory
    def check(model, batch_size, max_length, what):
        with open(os.environ["REFUSALS"], "a") as tries:
            tries.write(what + "\\n")
        raise RankuqError(f"{what} needs about 999 MiB of GPU memory; held by: pid 1 jax")
    rankuq.gpu_memory.check_member_room = check

ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
         runtime_env={"worker_process_setup_hook": refuse})
grid = json.loads(sys.argv[1])
try:
    grid_run(GridRequest(grid, Path(sys.argv[2]), source="test grid"))
except RankuqError as error:
    print(json.dumps({"error": str(error), "cause": repr(error.__cause__)}))
"""


@pytest.mark.slow  # a Ray of its own per trainer: 1 to 2.5 minutes each on two cores
@pytest.mark.parametrize("trainer", ["trial", "train"])
def test_a_member_refused_by_the_gpu_preflight_is_tried_once_and_named_plainly(tmp_path, trainer):
    """The preflight's RankuqError reaches the user as its own message, not in a Ray traceback, and
    is not retried by FailureConfig (the card's holders do not leave between tries)."""
    grid = {
        **DATA_PARALLEL,
        "resources": {"trainer": trainer, "cpus_per_trial": 1},
        "train": {"max_queries": 5},
    }
    refusals = tmp_path / "refusals.txt"
    env = {**os.environ, "REFUSALS": str(refusals)}
    code = [sys.executable, "-c", REFUSING, json.dumps(grid), str(tmp_path / "run")]
    done = subprocess.run(code, env=env, capture_output=True, text=True, timeout=600, check=True)
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("{")]
    found = json.loads(line)
    (tried,) = refusals.read_text().splitlines()  # once: no retry
    said = f"{tried} needs about 999 MiB of GPU memory; held by: pid 1 jax"
    assert found["error"] == f"training member {tried.removeprefix('member ')}: {said}"
    assert found["cause"] == "None"
    assert not list((tmp_path / "run" / "models").glob("*/model.safetensors"))


def test_a_members_own_error_is_unwrapped_from_rays():
    """A RankuqError a member raised (one of several data-parallel workers refused, say) comes out
    of Ray's wrappers by its message; another failure keeps Ray's whole error."""
    from ray import tune
    from ray.exceptions import RayTaskError

    from rankuq.backbone import ModelConfig
    from rankuq.bench.config.training import TrainConfig
    from rankuq.bench.engine.members import REFUSED, raise_failure
    from rankuq.bench.planning.jobs import TrainJob

    job = TrainJob(
        key="k1",
        method="bert",
        params={},
        shards="",
        seed=0,
        model=ModelConfig(),
        train=TrainConfig(),
        cpus=1,
        gpus=0,
        workers=1,
    )

    def result(error: Exception | None, metrics: dict[str, object] | None = None) -> tune.Result:
        return tune.Result({"config": {"job": job.to_dict()}, **(metrics or {})}, None, error, path="")

    try:  # Ray Train's wrapper, chained as `raise … from` the worker's error
        raise RuntimeError("Training failed") from RankuqError("member k1 needs about 999 MiB")
    except RuntimeError as chained:
        wrapped = RayTaskError("train_trial", "Traceback …", chained)
    with pytest.raises(RankuqError) as found:
        raise_failure(result(wrapped))
    assert str(found.value) == "training member k1: member k1 needs about 999 MiB"
    assert found.value.__cause__ is None and found.value.__suppress_context__
    with pytest.raises(RankuqError, match=r"^training member k1 failed: "):
        raise_failure(result(RayTaskError("train_trial", "Traceback …", RuntimeError("CUDA out of memory"))))
    with pytest.raises(RankuqError, match=r"^training member k1: held by: pid 1$"):
        raise_failure(result(None, {REFUSED: "held by: pid 1"}))
    raise_failure(result(None, {"training": {}}))  # a member that trained
