"""The stages' own decisions (bench.run.stages); the stages at work are tested through grid_run.grid_run."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from pandas.testing import assert_frame_equal

from rankuq.bench import metrics
from rankuq.bench.probes import DEFAULT_PROBES
from rankuq.bench.results.boards import read_run_dir
from rankuq.bench.results.leaderboard import MISSING
from rankuq.bench.results.rendering import paper_markdown
from rankuq.bench.run import stages
from rankuq.bench.run.grid_run import GridRequest, grid_run


def test_the_board_s_scoring_rules_are_the_metrics_of_the_predictions_and_bm25_gets_none(finished):
    """On the tiny grid's real WikiQA run: each method's Brier and NLL are the mean over seeds of
    bench.metrics' values of its predictions on the leaderboard's queries, tested against the baseline;
    BM25's raw scores get no ECE, Brier, NLL or ERCE (its ERCE was the pairwise softmax of raw
    scores) and no p-value for them: '—' in the Markdown board, as ECE already was."""
    run_dir, board = finished
    by_method = board.set_index("method")
    for method in ("bert", "mc_dropout", "ensemble"):
        files = sorted((run_dir / "predictions" / "wikiqa" / method).glob("seed-*.parquet"))
        assert len(files) == 2
        seeds = [
            metrics.compute(pq.read_table(path), ["Brier", "NLL"], drop_queries_without_relevant=True)
            for path in files
        ]
        for name in ("Brier", "NLL"):
            assert by_method.loc[method, name] == pytest.approx(np.mean([s[name] for s in seeds]), rel=1e-12)
            assert method == "bert" or 0 < by_method.loc[method, f"{name} p"] <= 1  # bert: the baseline
    masked = [f"{m}{suffix}" for m in (*stages.CALIBRATION, "ERCE") for suffix in ("", " std", " p")]
    assert by_method.loc["bm25", masked].isna().all()
    lines = paper_markdown(read_run_dir(run_dir)).splitlines()
    header = [cell.strip() for cell in next(line for line in lines if line.startswith("| method")).split("|")]
    bm25 = [cell.strip() for cell in next(line for line in lines if line.startswith("| bm25")).split("|")]
    for name in ("ECE", "ERCE", "Brier", "NLL"):
        assert bm25[header.index(name)] == MISSING, name
    assert bm25[header.index("R@1")] != MISSING


def test_a_probe_added_to_a_finished_grid_runs_on_its_rerun(finished, tiny_grid, tmp_path):
    """The probes asked for are part of a cell's probe cache key: adding `moments` to the tiny grid and
    rerunning it in a copy of its run directory computes the probe (it was once answered from the old
    cache, without it) and leaves the probes that were already there as they were."""
    run_dir, _ = finished
    rerun = tmp_path / run_dir.name
    shutil.copytree(run_dir, rerun)
    tiny_grid["eval"]["probes"] = [*DEFAULT_PROBES, "moments"]
    grid_run(GridRequest(tiny_grid, rerun, source="test grid with moments"))
    before = pd.read_csv(run_dir / "seeds.csv").set_index(["method", "seed"]).sort_index()
    after = pd.read_csv(rerun / "seeds.csv").set_index(["method", "seed"]).sort_index()
    assert "moments.rho.variance" not in before.columns
    assert np.isfinite(after.loc["mc_dropout", "moments.rho.variance"]).all()
    assert after.loc["bert", "moments.rho.variance"].isna().all()  # one draw: no moments
    assert_frame_equal(after[["ECE", "RA R@1"]], before[["ECE", "RA R@1"]])


GPU_RUN = """
import json, sys, ray
from pathlib import Path
from ray._private.state import actors  # the GCS's actor table (the public state API needs a dashboard)
from rankuq.bench.run.grid_run import GridRequest, grid_run
ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False)
grid = {"name": "gpu", "tasks": ["wikiqa"], "methods": {"bm25": {}, "bert": {}, "mc_dropout": {"T": 2}},
        "seeds": [0], "baseline": "bert", "model": {"backbone": "tiny", "max_length": 32},
        "train": {"max_queries": 8, "batch_size": 16}, "eval": {"probes": ["calibration"]},
        "resources": {"gpus_per_trial": 0.5, "cpus_per_trial": 1}}
grid_run(GridRequest(grid, Path(sys.argv[1]), source="test grid"))
names = [actor["ActorClassName"] for actor in actors().values()]
print(json.dumps([sum("CellScorer" in n for n in names), sum("PartScorer" in n for n in names)]))
"""


@pytest.mark.slow  # a whole grid in a Ray of its own: 81 s on two cores (test_scoring's are quick)
def test_a_gpu_run_scores_all_its_splits_with_one_actor_pool(tmp_path):
    """Where members hold a GPU share (logical GPUs here, CPU torch), the scoring stage's actors are
    started once for the run, not once per (cell, split): three cells, six splits, two actors."""
    done = subprocess.run(
        [sys.executable, "-c", GPU_RUN, str(tmp_path / "run")], check=True, capture_output=True, text=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [2, 0]
    assert len(list((tmp_path / "run").glob("predictions*/wikiqa/*/*.parquet"))) == 6
