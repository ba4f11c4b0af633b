"""Scoring: a trained member's predictions in process and with Ray Data over real WikiQA shards (order,
reuse of a worker's scorer, bfloat16 autocast, dropout draws, GP heads' predictive)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch

from rankuq import methods, tasks
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.bench.engine.scoring import (
    ShardScorer,
    batch_segments,
    read_segments,
    score_frame,
    score_shards,
)
from rankuq.bench.planning.jobs import ScorerSpec
from rankuq.contract import read_shards, shard_files
from rankuq.methods.base import NeuralMethod
from rankuq.tasks.shards import build_shards

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)


@pytest.fixture(scope="module")
def dev_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """WikiQA dev in shards of 400 rows (scoring must keep their order)."""
    cache = tmp_path_factory.mktemp("shards")
    return build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=cache, rows_per_shard=400)


def spec(method: str, params: dict, checkpoint: Path, shards: Path, precision: str = "auto") -> ScorerSpec:
    """How the scoring stage hands ``method`` on one tiny checkpoint to a worker (one thread)."""
    return ScorerSpec(
        method=method,
        params=params,
        model=TINY_MODEL,
        checkpoints=(str(checkpoint),),
        shards=str(shards),
        threads=1,
        precision=precision,
    )


def tiny_checkpoint(path: Path, seed: int) -> Path:
    bert = methods.create("bert")
    assert isinstance(bert, NeuralMethod)
    bert.save_member(build_cross_encoder(TINY_MODEL, seed), TINY_MODEL, path)
    return path


def scored_in_process(checkpoint: Path, shards: Path, precision: str = "auto", rows: int | None = None):
    """Relevance probabilities of ``shards``' rows by a ShardScorer in this process."""
    scorer = ShardScorer(spec("bert", {}, checkpoint, shards, precision).to_dict())
    frame = read_shards(shards).to_pandas()
    return np.stack(list(scorer(frame if rows is None else frame.head(rows))["samples"]))[:, 0]


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
from rankuq.bench.engine.scoring import score_shards
from rankuq.bench.planning.jobs import ScorerSpec
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


@pytest.mark.slow  # a second Ray cluster (16 s); the same draws across tasks stay quick (next test)
def test_draws_do_not_depend_on_the_cluster_s_free_cpus(ray_session, dev_shards, tmp_path):
    """Scored on another Ray cluster with more CPUs (Ray Data would cut each part into as many read
    blocks), the batches, their padding and the dropout seeds are the same: so are the draws."""
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    scorer = spec("mc_dropout", {"T": 3}, checkpoint, dev_shards)
    here = score_shards(scorer, 256)
    there, _ = scored_on_another_cluster(scorer, tmp_path / "three-cpus.parquet", cpus=3)
    assert there.equals(here)


def test_cpu_tasks_share_a_cell_s_batches_with_the_same_draws(ray_session, dev_shards, tmp_path):
    """Two one-thread CPU scoring tasks at a time (the scoring stage's default on two cores) give
    the table of one task, in shard order, dropout draws included: the same batches, seeded alike."""
    checkpoint = tiny_checkpoint(tmp_path / "member", seed=0)
    scorer = spec("mc_dropout", {"T": 3}, checkpoint, dev_shards)
    assert score_shards(scorer, 256, scorers=2).equals(score_shards(scorer, 256, scorers=1))


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


@pytest.mark.slow  # a second Ray cluster (26 s); score_cells against the CPU passes stays quick
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
    labels = torch.tensor(rows["label"].to_numpy() > 0).long()
    model.train()
    method.loss(model, inputs, labels)  # SNGP's precision
    with torch.no_grad():
        method.refit(model, [(inputs, labels)], seed=0)  # PG-GP's posterior (SNGP's refit: none)
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


SCORE_CELLS_ON_ANOTHER_CLUSTER = """
import json, sys, ray, pyarrow.parquet as pq
from ray._private.state import actors
from rankuq.bench.engine.scoring import score_cells
from rankuq.bench.planning.jobs import ScorerSpec
ray.init(num_cpus=3, num_gpus=2, include_dashboard=False, log_to_driver=False)
specs = [ScorerSpec.from_dict(spec) for spec in json.loads(sys.argv[1])]
for index, table in enumerate(score_cells(specs, 256, gpus=1.0, scorers=2)):
    pq.write_table(table, f"{sys.argv[2]}-{index}.parquet")
print(sum("CellScorer" in actor["ActorClassName"] for actor in actors().values()))
"""


@pytest.mark.slow  # three cells on two actors (35 s); test_stages's GPU run scores in one pass
def test_one_pass_scores_every_cell_as_its_own_pass_does(ray_session, dev_shards, tmp_path):
    """A run's one scoring pass (two GPU actors, logical GPUs, CPU torch, cached token ids) gives each
    cell the table its own CPU pass gives, in order, dropout draws included; an actor serves several
    cells (three cells, two actors)."""
    members = [tiny_checkpoint(tmp_path / f"member-{seed}", seed) for seed in (0, 1)]
    specs = [
        spec("mc_dropout", {"T": 3}, members[0], dev_shards),
        spec("bert", {}, members[1], dev_shards),
        spec("bm25", {}, members[0], dev_shards),
    ]
    out = tmp_path / "cell"
    arguments = [json.dumps([s.to_dict() for s in specs]), str(out)]
    done = subprocess.run(
        [sys.executable, "-c", SCORE_CELLS_ON_ANOTHER_CLUSTER, *arguments],
        check=True,
        capture_output=True,
        text=True,
    )
    assert int(done.stdout.split()[-1]) == 2
    for index, scorer in enumerate(specs):
        assert pq.read_table(f"{out}-{index}.parquet").equals(score_shards(scorer, 256)), scorer.method
