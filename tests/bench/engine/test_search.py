"""Hyperparameter searches: a tiny real search (Ray Tune, ASHA) scores every epoch on dev, its best
setting trains every seed of the grid, and RA's b is searched on each cell's dev predictions (the
space's checks: tests/bench/config/test_search_space.py)."""

import io
import json
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench import metrics
from rankuq.bench.config.grid import parse_grid
from rankuq.bench.config.search_space import SearchConfig
from rankuq.bench.engine.scoring import score_frame
from rankuq.bench.engine.search import _search, search_risk_b
from rankuq.bench.probes import scored_lists
from rankuq.bench.probes.risk import risk_aware_mean
from rankuq.bench.results.mlflow_store import StoreClient, default_tracking_uri
from rankuq.bench.run.grid_run import GridRequest, grid_run
from rankuq.contract import read_shards
from tests.mlflow_runs import mlflow_runs

BASE = {"tasks": ["wikiqa"], "methods": {"bert": {}, "gpf": {}, "mc_dropout": {}}}


def grid_with(search: dict, **more: object) -> dict:
    return {**BASE, **more, "search": search}


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_optuna_searches_b_on_dev_lists_and_a_second_call_reads_the_cache(ray_session, wikiqa, tmp_path):
    search = {"algorithm": "optuna", "num_samples": 6, "space": {"risk.b": {"uniform": [0.0, 5.0]}}}
    spec, _ = parse_grid(grid_with(search), "grid.yaml")
    lists = scored_lists(wikiqa).with_relevant()
    found = search_risk_b("b", lists, spec.search, tmp_path / "b", str(tmp_path / "ray"), seed=0)
    trials = pd.read_csv(found.folder / "trials.csv")
    values = [risk_aware_mean(lists, b, "R@1") for b in trials["risk.b"]]
    assert len(values) == 6 and len(set(values)) > 1 and not found.cached
    assert found.score == max(values) == risk_aware_mean(lists, found.best["risk.b"], "R@1")
    again = search_risk_b("b", lists, spec.search, tmp_path / "b", str(tmp_path / "ray"), seed=0)
    assert again.cached and again.best == found.best


def test_a_search_leaves_ctrl_c_to_the_driver(ray_session, wikiqa, tmp_path):
    """Tune installs its own SIGINT handler for an experiment and keeps it after the experiment
    ends; the grid's next Ctrl-C would then only ask Tune to wind down a finished search."""
    search = {"num_samples": 2, "space": {"risk.b": {"uniform": [0.0, 1.0]}}}
    spec, _ = parse_grid(grid_with(search), "grid.yaml")
    lists = scored_lists(wikiqa).with_relevant()
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        search_risk_b("b", lists, spec.search, tmp_path / "b", str(tmp_path / "ray"), seed=0)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


def _calibration_trial(config: dict[str, float]) -> None:
    """A trial that reports a made-up dev Brier of its lr, lowest at the smallest lr."""
    from ray import tune

    tune.report({"epoch": 1, "Brier": config["train.lr"] * 100})


def test_a_search_by_brier_keeps_the_trial_with_the_lowest_brier(ray_session, tmp_path):
    """Brier validated and was maximised before the metric declared lower better (issue 49): Tune was
    told mode max and the choice kept the worst-calibrated trial. A real Tune experiment, no model."""
    from ray.tune.schedulers import FIFOScheduler

    search = SearchConfig(metric="Brier", num_samples=3, space={"train.lr": {"choice": [3e-3, 1e-3, 2e-3]}})
    assert search.mode == "min"
    folder, storage = tmp_path / "search", str(tmp_path / "ray")
    found = _search("lr", _calibration_trial, search, ["train.lr"], FIFOScheduler(), 0, folder, storage, 1)
    trials = pd.read_csv(found.folder / "trials.csv")
    assert trials.Brier.nunique() > 1  # the trials differ, so maximising would choose another
    assert found.score == trials.Brier.min()
    assert found.best == {"train.lr": trials.loc[trials.Brier.idxmin(), "train.lr"]}


# The integration: a 4-trial search of the shared cross-encoder's learning rate and dropout with ASHA
# over 2 epochs, one trial at a time (so ASHA meets the rung's reports in a fixed order), then b.
SEARCH_GRID = {
    "name": "tiny-search",
    "tasks": ["wikiqa"],
    "methods": {"mc_dropout": {"T": 3}},
    "seeds": [0, 1],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30, "batch_size": 16, "epochs": 2},
    "eval": {"split": "test", "batch_size": 128, "probes": ["risk"]},
    "resources": {"max_concurrent_trials": 1},
    "search": {
        "num_samples": 4,
        "scheduler": {"name": "asha", "grace_period": 1, "reduction_factor": 2},
        "space": {
            # The seeded searcher draws 3e-3 twice, then 1e-5 twice: the model barely moves at 1e-5,
            # so ASHA stops those trials at epoch 1, below the median of the earlier reports.
            "train.lr": {"choice": [1.0e-5, 3.0e-3]},
            "model.dropout": {"uniform": [0.05, 0.3]},
            "risk.b": {"uniform": [0.0, 2.0]},
        },
    },
}


def run(run_dir: Path) -> tuple[pd.DataFrame, str]:
    output = io.StringIO()
    board = grid_run(
        GridRequest(SEARCH_GRID, run_dir, source="test grid"), Console(file=output, width=300)
    ).board
    return board, output.getvalue()


def searches(run_dir: Path) -> dict[str, tuple[dict, pd.DataFrame]]:
    """Each search's record (best.json) and trial table, by its name."""
    found = {}
    for folder in (run_dir / "search").iterdir():
        record = json.loads((folder / "best.json").read_text())
        found[record["name"]] = (record, pd.read_csv(folder / "trials.csv"))
    return found


def member_jobs(run_dir: Path) -> dict[int, dict]:
    """The job each member of the grid was trained with (its Tune trial's config), by seed."""
    jobs = [
        json.loads(path.read_text())["job"]
        for path in (run_dir / "ray" / "tune").glob("member-*/params.json")
    ]
    return {job["seed"]: job for job in jobs}


@pytest.fixture(scope="module")
def searched(ray_session, tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("search")
    board, output = run(run_dir)
    return run_dir, board, output


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_trials_report_the_dev_metric_every_epoch_and_asha_stops_poor_ones(searched):
    run_dir, _, output = searched
    record, trials = searches(run_dir)["bert on wikiqa"]
    assert trials.trial.nunique() == record["trials"] == 4
    reached = trials.groupby("trial", sort=False).epoch.agg(list)
    assert all(epochs == list(range(1, len(epochs) + 1)) for epochs in reached)  # one report per epoch
    assert trials["R@1"].between(0, 1).all() and trials["R@1"].nunique() > 1
    stopped = [trial for trial, epochs in reached.items() if len(epochs) < 2]
    assert record["stopped"] == len(stopped) >= 1
    # ASHA stops a trial at epoch 1 only below the median of the rung's earlier reports.
    first = trials[trials.epoch == 1].set_index("trial")["R@1"]
    assert all(first[trial] < first.max() for trial in stopped)
    assert f"search bert on wikiqa: 4 trials ({len(stopped)} stopped early)" in output


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_the_chosen_setting_is_the_best_dev_metric_at_the_last_epoch(searched):
    run_dir, _, _ = searched
    record, trials = searches(run_dir)["bert on wikiqa"]
    last = trials[trials.epoch == 2]
    best = last.loc[last["R@1"].idxmax()]
    assert record["score"] == best["R@1"] == last["R@1"].max()
    assert record["best"] == {"train.lr": best["train.lr"], "model.dropout": best["model.dropout"]}


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_every_seed_trains_with_the_chosen_setting(searched):
    run_dir, _, _ = searched
    record, _ = searches(run_dir)["bert on wikiqa"]
    jobs = member_jobs(run_dir)
    assert sorted(jobs) == [0, 1]
    for job in jobs.values():
        assert (job["train"]["lr"], job["model"]["dropout"]) == tuple(record["best"].values())
    # The seed-0 member is the best trial's model: scored as the trial scored, its dev R@1 is the report.
    (dev,) = (run_dir / "cache").glob("wikiqa-dev-*")
    model = run_dir / "models" / jobs[0]["key"]
    score = methods.create("bert").make_scorer(ModelConfig(**jobs[0]["model"]), [model], dev)
    rows = read_shards(dev).to_pandas()
    table = score_frame(score, rows, 128, probabilistic=True)
    assert metrics.compute(table, ["R@1"], drop_queries_without_relevant=True)["R@1"] == record["score"]
    for seed in mlflow_runs(run_dir, "seed"):
        assert float(seed.data.params["train.lr"]) == record["best"]["train.lr"]


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_b_is_the_best_tried_b_on_each_seeds_dev_predictions(searched):
    run_dir, _, output = searched
    found = searches(run_dir)
    assert len(found) == 3  # the training search and mc_dropout's two seeds
    chosen = {}
    for seed in ("0", "1"):
        record, trials = found[f"risk.b of mc_dropout × wikiqa seed {seed}"]
        (path,) = (run_dir / "predictions-dev" / "wikiqa" / "mc_dropout").glob(f"seed-{seed}-*.parquet")
        lists = scored_lists(pq.read_table(path), "dev").with_relevant()
        values = [risk_aware_mean(lists, b, "R@1") for b in trials["risk.b"]]
        np.testing.assert_allclose(values, trials["R@1"], atol=1e-12)
        assert len(values) == 4 and risk_aware_mean(lists, record["best"]["risk.b"], "R@1") == max(values)
        chosen[seed] = record["best"]["risk.b"]
    for seed_mlflow_run in mlflow_runs(run_dir, "seed"):
        seed = seed_mlflow_run.data.tags["seed"]
        assert seed_mlflow_run.data.metrics["RA.b"] == pytest.approx(chosen[seed])
        assert float(seed_mlflow_run.data.params["risk.b"]) == chosen[seed]
    assert output.count("search risk.b of mc_dropout × wikiqa seed") == 2


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_mlflow_holds_an_mlflow_run_per_search_under_the_grids_mlflow_run(searched):
    run_dir, _, _ = searched
    (grid,) = mlflow_runs(run_dir, "grid")
    found = mlflow_runs(run_dir, "search")
    assert len(found) == 3 and {s.data.tags["mlflow.parentRunId"] for s in found} == {grid.info.run_id}
    record, _ = searches(run_dir)["bert on wikiqa"]
    (training,) = [s for s in found if s.info.run_name == "search bert on wikiqa"]
    assert {key: float(value) for key, value in training.data.params.items()} == record["best"]
    assert training.data.metrics["dev_R_at_1"] == record["score"]
    assert training.data.metrics["stopped_early"] == record["stopped"]
    client = StoreClient(default_tracking_uri(run_dir))  # reaches the run directory's mlartifacts/
    assert [a.path for a in client.list_artifacts(training.info.run_id)] == ["trials.csv"]


@pytest.mark.slow  # a real Tune search (~10 min on 2 busy cores): pytest -m slow
def test_a_rerun_searches_nothing_again(searched):
    run_dir, board, _ = searched
    count = len(mlflow_runs(run_dir, "search")) + len(mlflow_runs(run_dir, "seed"))
    experiments = sorted((run_dir / "ray").iterdir())
    again, output = run(run_dir)
    lines = [line for line in output.splitlines() if line.startswith("search")]
    assert len(lines) == 3 and all(line.endswith("(cached)") for line in lines)
    assert sorted((run_dir / "ray").iterdir()) == experiments  # no new Tune experiment
    assert len(mlflow_runs(run_dir, "search")) + len(mlflow_runs(run_dir, "seed")) == count
    pd.testing.assert_frame_equal(again, board)
