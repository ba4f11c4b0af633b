"""Where everything of a run directory lies: every path comes from ``RunLayout``."""

import os

import pytest

from rankuq.bench.rundir.layout import RunLayout
from rankuq.errors import RankuqError


def test_the_layout_owns_every_path(tmp_path):
    layout = RunLayout(tmp_path)
    assert layout.member("k") == tmp_path / "models" / "k"
    assert layout.training_file("k") == tmp_path / "models" / "k" / "rankuq-training.json"
    assert layout.predictions("wikiqa", "bert", 1, "k", dev=True) == (
        tmp_path / "predictions-dev" / "wikiqa" / "bert" / "seed-1-k.parquet"
    )
    assert (
        layout.plot("reliability", "wikiqa:bm25→clariq", "bert").name
        == "reliability-wikiqa_bm25_clariq-bert.png"
    )
    assert layout.default_tracking_uri == f"sqlite:///{tmp_path / 'mlflow.db'}"


def test_a_relative_run_dir_is_resolved_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    layout = RunLayout("runs/tiny")
    os.chdir("/")  # the paths do not move with the working folder
    assert layout.root == tmp_path / "runs" / "tiny"
    assert layout.default_tracking_uri == f"sqlite:///{tmp_path}/runs/tiny/mlflow.db"
    assert layout.default_tracking_uri.startswith("sqlite:////")  # four slashes: an absolute path


def test_the_folders_of_a_run(tmp_path):
    layout = RunLayout(tmp_path)
    assert (layout.cache, layout.ray_storage, layout.models, layout.plots) == (
        tmp_path / "cache",
        tmp_path / "ray",
        tmp_path / "models",
        tmp_path / "plots",
    )
    assert layout.search("s1") == tmp_path / "search" / "s1"
    assert layout.fit_file("f1") == tmp_path / "fits" / "f1" / "fit.json"
    assert layout.plot_index == tmp_path / "plots" / "index.json"
    assert layout.grid_file == tmp_path / "grid.yaml"
    assert layout.leaderboard_csv == tmp_path / "leaderboard.csv"
    assert layout.seeds_csv == tmp_path / "seeds.csv"
    assert layout.ray_pids == tmp_path / "ray-pids.json"
    assert (layout.mlflow_db, layout.mlartifacts) == (tmp_path / "mlflow.db", tmp_path / "mlartifacts")


def test_task_and_condition_names_become_one_portable_file_name(tmp_path):
    layout = RunLayout(tmp_path)
    # A family task's "beir/scifact" is one folder, not two; the tested split has no "-dev".
    assert layout.predictions("beir/scifact", "mc_dropout", 0, "k") == (
        tmp_path / "predictions" / "beir+scifact" / "mc_dropout" / "seed-0-k.parquet"
    )
    assert layout.probes("parquet:/data/my runs/a.parquet", "bert", 2, "k") == (
        tmp_path / "probes" / "parquet+data+my+runs+a.parquet" / "bert" / "seed-2-k"
    )
    # A long task name keeps its start and end (48 characters) so two tasks stay apart.
    long = "parquet:/" + "x" * 60 + "/tested.parquet"
    folder = layout.predictions(long, "bert", 0, "k").parent.parent.name
    assert len(folder) == 48 and folder.startswith("parquet+xxxx") and folder.endswith("+tested.parquet")


def test_a_task_s_cached_lists_are_its_one_folder_or_one_clear_error(tmp_path):
    layout = RunLayout(tmp_path)
    with pytest.raises(RankuqError, match=r"cache holds 0 beir/scifact-test-\* list folders, not one"):
        layout.cached_lists("beir/scifact", "test")
    (tmp_path / "cache" / "wikiqa-test-aaaa").mkdir(parents=True)
    (tmp_path / "cache" / "wikiqa-train-bbbb").mkdir()
    assert layout.cached_lists("wikiqa", "test") == tmp_path / "cache" / "wikiqa-test-aaaa"
    (tmp_path / "cache" / "wikiqa-test-cccc").mkdir()  # lists of another grid beside them
    with pytest.raises(RankuqError, match=r"holds 2 wikiqa-test-\* list folders"):
        layout.cached_lists("wikiqa", "test")
