"""The Ray parts: members trained data-parallel (two Ray Train workers, gloo on CPU), and inference
with Ray Data over real WikiQA shards (order, reuse of a worker's scorer, bfloat16 autocast)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from mlflow.tracking import MlflowClient

from rankuq import methods, tasks
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.bench.engine import (
    ShardScorer,
    batch_segments,
    dev_metric,
    read_segments,
    score_frame,
    score_shards,
)
from rankuq.bench.grid import parse_grid
from rankuq.bench.jobs import ScorerSpec
from rankuq.bench.layout import TRAINING_FILE, RunLayout
from rankuq.bench.plan import plan, scoring_precision
from rankuq.bench.runner import run_grid
from rankuq.bench.tracking import EXPERIMENT, default_tracking_uri
from rankuq.errors import RankuqError
from rankuq.shards import read_shards, shard_files
from rankuq.tasks.shards import build_shards

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)

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


@pytest.fixture(scope="module")
def dev_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """WikiQA dev in shards of 400 rows (scoring must keep their order)."""
    cache = tmp_path_factory.mktemp("shards")
    return build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=cache, rows_per_shard=400)


def spec(method: str, params: dict, checkpoint: Path, shards: Path, precision: str = "auto") -> ScorerSpec:
    """How the scoring stage hands ``method`` on one tiny checkpoint to a worker (one thread)."""
    return ScorerSpec(method, params, TINY_MODEL.model_dump(), (str(checkpoint),), str(shards), 1, precision)


def tiny_checkpoint(path: Path, seed: int) -> Path:
    methods.create("bert").save_member(build_cross_encoder(TINY_MODEL, seed), TINY_MODEL, path)
    return path


def scored_in_process(checkpoint: Path, shards: Path, precision: str = "auto", rows: int | None = None):
    """Relevance probabilities of ``shards``' rows by a ShardScorer in this process."""
    scorer = ShardScorer(spec("bert", {}, checkpoint, shards, precision).to_dict())
    frame = read_shards(shards).to_pandas()
    return np.stack(scorer(frame if rows is None else frame.head(rows))["samples"])[:, 0]


def test_ray_scoring_matches_the_scorer_and_reloads_rewritten_weights(ray_session, dev_shards, tmp_path):
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    arguments = (spec("bert", {}, checkpoint, dev_shards), 256)
    first = score_shards(*arguments)
    expected = read_shards(dev_shards)
    assert first["qid"].to_pylist() == expected["qid"].to_pylist()  # shard order kept
    assert first["cid"].to_pylist() == expected["cid"].to_pylist()
    np.testing.assert_allclose(
        first["prob_mean"].to_numpy(), scored_in_process(checkpoint, dev_shards), atol=1e-6
    )
    assert score_shards(*arguments).equals(first)  # the worker's kept scorer: the same table

    tiny_checkpoint(checkpoint, seed=1)  # other weights under the same path
    rewritten = score_shards(*arguments)["prob_mean"].to_numpy()
    np.testing.assert_allclose(rewritten, scored_in_process(checkpoint, dev_shards), atol=1e-6)
    assert not np.allclose(rewritten, first["prob_mean"].to_numpy(), atol=1e-3)


def test_bf16_scoring_runs_under_autocast_close_to_fp32(dev_shards, tmp_path):
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    fp32 = scored_in_process(checkpoint, dev_shards, "fp32", rows=128)
    bf16 = scored_in_process(checkpoint, dev_shards, "bf16", rows=128)
    gap = np.abs(fp32 - bf16).max()
    assert 0 < gap < 0.02  # rounded to bfloat16's 8 bits of mantissa, not to a different model


@pytest.mark.parametrize(
    ("precision", "gpus", "resolved"),
    [("auto", 0, "fp32"), ("auto", 0.5, "bf16"), ("fp32", 1, "fp32"), ("bf16", 0, "bf16")],
)
def test_auto_precision_is_bf16_where_scoring_gets_a_gpu(precision, gpus, resolved, tmp_path):
    grid = {**DATA_PARALLEL, "eval": {"precision": precision}, "resources": {"gpus_per_trial": gpus}}
    assert scoring_precision(parse_grid(grid, "grid.yaml")[0]) == resolved


def test_dropout_draws_do_not_depend_on_what_the_process_ran_before(dev_shards, tmp_path):
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    scorer = ShardScorer(spec("mc_dropout", {"T": 4}, checkpoint, dev_shards).to_dict())
    rows = read_shards(dev_shards).to_pandas().head(64)
    first = np.stack(scorer(rows)["samples"])
    torch.rand(1000)  # another task's draws in a pooled worker
    again = np.stack(scorer(rows)["samples"])
    np.testing.assert_array_equal(again, first)
    assert np.ptp(first, axis=1).max() > 0  # dropout is on: the T passes differ
    other = np.stack(scorer(rows.iloc[1:])["samples"])
    assert not np.array_equal(other, first[1:])  # other rows, other draws


SCORE_ON_ANOTHER_CLUSTER = """
import json, sys, ray, pyarrow.parquet as pq
from ray._private.state import actors  # the GCS's actor table (the public state API needs a dashboard)
from rankuq.bench.engine import score_shards
from rankuq.bench.jobs import ScorerSpec
cpus, gpus, scorers = json.loads(sys.argv[3])
ray.init(num_cpus=cpus, num_gpus=gpus, include_dashboard=False, log_to_driver=False)
spec = ScorerSpec.from_dict(json.loads(sys.argv[1]))
pq.write_table(score_shards(spec, 256, gpus=1.0 if gpus else 0.0, scorers=scorers), sys.argv[2])
print(sum("PartScorer" in actor["ActorClassName"] for actor in actors().values()))
"""


def scored_on_another_cluster(scorer: ScorerSpec, out: Path, cpus: int, gpus: int = 0, scorers: int = 1):
    """``scorer``'s predictions from a fresh Ray of ``cpus`` and ``gpus``, and its scoring actors."""
    shape = json.dumps([cpus, gpus, scorers])
    command = [sys.executable, "-c", SCORE_ON_ANOTHER_CLUSTER, scorer.to_json(), str(out), shape]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return pq.read_table(out), int(done.stdout.split()[-1])


def test_draws_do_not_depend_on_the_cluster_s_free_cpus(ray_session, dev_shards, tmp_path):
    """Scored on another Ray cluster with more CPUs (Ray Data would cut each part into as many read
    blocks), the batches, their padding and the dropout seeds are the same: so are the draws."""
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    scorer = spec("mc_dropout", {"T": 3}, checkpoint, dev_shards)
    here = score_shards(scorer, 256)
    there, _ = scored_on_another_cluster(scorer, tmp_path / "three-cpus.parquet", cpus=3)
    assert there.equals(here)


def test_batches_are_ray_data_s_cut_of_one_block_per_part(dev_shards, tmp_path):
    """Parts gathered until they hold a batch, then cut in batches (worked out for 300, 100, 100 and
    60 rows in batches of 256): what map_batches made of one block per part."""
    rows = read_shards(dev_shards)
    sizes, parts, start = [300, 100, 100, 60], [], 0
    for index, size in enumerate(sizes):
        parts.append(tmp_path / f"part-{index:05d}.parquet")
        pq.write_table(rows.slice(start, size), parts[-1])
        start += size
    a, b, c, d = map(str, parts)
    assert batch_segments(parts, 256) == [
        [(a, 0, 256)],
        [(a, 256, 300)],
        [(b, 0, 100), (c, 0, 100), (d, 0, 56)],
        [(d, 56, 60)],
    ]
    batch = pd.DataFrame({"segments": [json.dumps([(b, 90, 100), (c, 0, 5)])]})
    np.testing.assert_array_equal(read_segments(batch)["cid"], rows.slice(390, 15)["cid"].to_numpy())


def test_gpu_scorers_share_a_cell_s_batches_with_the_same_draws(ray_session, dev_shards, tmp_path):
    """Two GPU scoring actors (logical GPUs, CPU torch) take the batches in turn: the same table, in
    shard order, as one CPU task, dropout draws included."""
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    scorer = spec("mc_dropout", {"T": 3}, checkpoint, dev_shards)
    assert len(shard_files(dev_shards)) >= 2
    here = score_shards(scorer, 256)
    there, actors = scored_on_another_cluster(scorer, tmp_path / "two.parquet", cpus=3, gpus=2, scorers=2)
    assert actors == 2
    assert there.equals(here)


@pytest.mark.parametrize("name", ["sngp", "pg_gp"])
def test_gp_heads_score_prob_mean_with_the_paper_s_approximation(name, dev_shards, tmp_path):
    """prob_mean is the head's predictive E[σ(g)] (mean-field σ(m/√(1 + πv/8)) for SNGP, paper
    004; Gauss–Hermite for PG-GP, paper 003), not the mean of its S draws, which stay the samples;
    the same through the Ray Data scorer and the in-process ``score_frame``."""
    raw = {"features": 32, "S": 8} | ({"chains": 2, "steps": 2} if name == "pg_gp" else {})
    method = methods.create(name, raw, "test")
    model = method.build_model(TINY_MODEL, seed=0)
    rows = read_shards(dev_shards).to_pandas().head(16)
    inputs = encode_pairs(
        load_tokenizer(TINY_MODEL), [list(c) for c in rows["context"]], rows["text"].tolist(), 32
    )
    model.train()
    method.loss(model, inputs, torch.tensor(rows["label"].to_numpy() > 0).long())  # a posterior
    method.save_member(model, TINY_MODEL, tmp_path / "member")
    loaded = method.load_member(TINY_MODEL, tmp_path / "member")
    with torch.inference_mode():
        _, _, probability = method.predictive([loaded], inputs)
        draws = method.sample([loaded], inputs)
    scorer = ShardScorer(spec(name, raw, tmp_path / "member", dev_shards, "fp32").to_dict())
    scored = scorer(rows)
    np.testing.assert_allclose(scored["prob_mean"], probability.numpy(), rtol=1e-5)
    np.testing.assert_allclose(np.stack(scored["samples"]), draws.numpy(), rtol=1e-5)
    assert np.abs(scored["prob_mean"] - draws.numpy().mean(axis=1)).max() > 1e-3  # not the draws' mean
    table = score_frame(scorer.score, rows, 5, method.probabilistic)  # batches of 5: joined in order
    np.testing.assert_allclose(table["prob_mean"].to_numpy(), probability.numpy(), rtol=1e-5)
