import io
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow.utils.validation import MAX_TAG_VAL_LENGTH
from PIL import Image

from rankuq.backbone import ModelConfig, offline_minilm
from rankuq.bench.plots import overview_png
from rankuq.bench.results.boards import Board, read_run_dir, read_tracking
from rankuq.bench.results.leaderboard import metrics_of
from rankuq.bench.results.mlflow_names import LEVEL_TAG, NOTE_TAG, OVERVIEW_KEY, VIEW_TAG, mlflow_name
from rankuq.bench.results.mlflow_store import default_tracking_uri
from rankuq.bench.results.rendering import paper_markdown
from rankuq.bench.results.tracking import Tracker, backbone_params, cell_metrics, experiment_page, log_board
from rankuq.bench.run.grid_run import GridRequest, grid_run


def test_an_mlflow_run_left_open_is_found_to_complete_but_not_as_logged(tmp_path):
    tracker = Tracker(default_tracking_uri(tmp_path), served=True)
    opened = tracker.open("k1", "seed run")  # a driver interrupted before finish()
    assert tracker.find("k1") == opened and tracker.find("k1", finished=True) is None
    assert tracker.open("k1", "seed run") == opened  # the rerun completes it: no second MLflow run
    tracker.finish(opened)
    assert tracker.find("k1", finished=True) == opened
    assert tracker.mlflow_run_keys() == ["k1"]


def test_the_grids_mlflow_run_shows_the_board_as_its_description_and_overview_image(finished_run, tmp_path):
    tracker = Tracker(default_tracking_uri(tmp_path), served=True)
    grid = tracker.open("g", "my-grid")
    board = read_run_dir(finished_run).table
    log_board(tracker, grid, "my-grid", board)
    mlflow_run = tracker.client.get_run(grid)
    assert mlflow_run.data.tags[NOTE_TAG] == paper_markdown(Board("my-grid", board, ()))
    # log_image's keyed images: a PNG (and its thumbnail) per step under images/, named by the key.
    images = [a.path for a in tracker.client.list_artifacts(grid, "images")]
    pngs = [path for path in images if path.endswith(".png") and "compressed" not in path]
    assert len(pngs) == 1 and pngs[0].startswith(f"images/{OVERVIEW_KEY}+step+0+")
    logged = Image.open(tracker.client.download_artifacts(grid, pngs[0], str(tmp_path)))
    drawn = Image.open(io.BytesIO(overview_png(board, metrics_of(board))))
    assert logged.size == drawn.size


def test_a_long_board_is_cut_at_a_row_within_the_tag_limit(finished_run, tmp_path):
    tracker = Tracker(default_tracking_uri(tmp_path), served=True)
    grid = tracker.open("g", "my-grid")
    board = read_run_dir(finished_run).table
    long = pd.concat([board.assign(condition=board.condition + f"-{i}") for i in range(40)])
    log_board(tracker, grid, "my-grid", long.reset_index(drop=True))
    text = tracker.client.get_run(grid).data.tags[NOTE_TAG]
    assert len(text) <= MAX_TAG_VAL_LENGTH and text.endswith("artifact leaderboard.md\n")
    assert text.splitlines()[-3].startswith("|")  # the last whole line kept is a table row


def test_every_mlflow_run_names_rankuq_as_its_source_and_the_page_says_how_to_serve_a_local_store(tmp_path):
    uri = default_tracking_uri(tmp_path)
    assert experiment_page(uri) is None  # nothing logged yet
    tracker = Tracker(uri, served=True)
    mlflow_run = tracker.client.get_run(tracker.open("k1", "seed run"))
    assert (
        mlflow_run.data.tags["mlflow.source.name"] == "rankuq"
        and mlflow_run.data.tags["mlflow.source.type"] == "LOCAL"
    )
    runs_page = (
        f"http://127.0.0.1:5000/#/experiments/{tracker.experiment_id}/runs?workflowType=machine_learning"
    )
    # The store names no folder: its artifacts are served from the one beside it, wherever it lies.
    assert mlflow_run.info.artifact_uri == f"mlflow-artifacts:/{mlflow_run.info.run_id}/artifacts"
    served = tmp_path.resolve() / "mlartifacts"
    assert experiment_page(uri) == (
        f"`mlflow ui --backend-store-uri {uri} --artifacts-destination {served}`, "
        f"then {runs_page}&viewStateShareKey=rankuq"
    )


def test_the_backbone_is_logged_by_name_and_folder(tmp_path):
    minilm = str(offline_minilm())
    assert backbone_params(ModelConfig()) == {
        "model.backbone": "all-MiniLM-L6-v2",
        "model.backbone_path": minilm,
    }
    assert backbone_params(ModelConfig(backbone="tiny"))["model.backbone_path"] == minilm
    (tmp_path / "ckpt").mkdir()
    given = ModelConfig(backbone=str(tmp_path / "ckpt"))
    assert backbone_params(given)["model.backbone_path"] == str((tmp_path / "ckpt").resolve())
    assert backbone_params(ModelConfig(backbone="org/model")) == {"model.backbone": "org/model"}  # a hub name


def test_a_cell_of_one_seed_logs_no_std_and_none_logs_nan():
    summary = pd.Series(
        {"R@1": 0.5, "R@1 std": 0.0, "R@1 p": 0.01, "ECE": np.nan, "ECE std": np.nan, "ECE p": np.nan}
    )
    assert cell_metrics(summary, ["R@1", "ECE"], seeds=1) == {"R@1": 0.5, "R@1 p": 0.01}
    assert cell_metrics(summary, ["R@1", "ECE"], seeds=2) == {"R@1": 0.5, "R@1 std": 0.0, "R@1 p": 0.01}


def test_every_mlflow_run_of_a_real_grid_carries_the_commit_and_the_columns_the_ui_shows(finished):
    run_dir, board = finished
    tracker = Tracker(default_tracking_uri(run_dir), served=True)
    mlflow_runs = tracker.client.search_runs([tracker.experiment_id], max_results=1000)
    assert len(mlflow_runs) == 1 + 4 + 8  # the grid, its cells, their seeds
    commits = {mlflow_run.data.tags.get("mlflow.source.git.commit") for mlflow_run in mlflow_runs}
    assert len(commits) == 1 and len(commits.pop() or "") == 40
    for mlflow_run in mlflow_runs:
        params = mlflow_run.data.params
        if mlflow_run.data.tags[LEVEL_TAG] == "grid":
            assert params["model.backbone"] == "tiny"
            continue
        assert params["backbone"] == "tiny" and params["task"] == "wikiqa" == params["shift"]
        assert params["method"] == mlflow_run.data.tags["method"]
        if mlflow_run.data.tags[LEVEL_TAG] == "seed":
            assert params["seed"] in ("0", "1")
        else:
            assert params["seed"] == "0,1" and params["seeds"] == "2"
            row = board.set_index("method").loc[params["method"]]
            for metric in ("ECE", "ERCE", "Brier"):  # the view's calibration columns, where defined
                if np.isfinite(row[metric]):
                    assert mlflow_run.data.metrics[mlflow_name(metric)] == pytest.approx(
                        row[metric], abs=1e-12
                    )
    view = json.loads(tracker.client.get_experiment(tracker.experiment_id).tags[VIEW_TAG])
    assert {"metrics.`AP`", "metrics.`R_at_1`", "metrics.`ECE`"} <= set(view["selectedColumns"])
    assert {"params.`seed`", "params.`task`", "params.`backbone`"} <= set(view["selectedColumns"])


@pytest.mark.slow  # a real grid rerun with one more method (about a minute): pytest -m slow
def test_a_method_added_to_a_finished_grid_logs_only_what_is_new(finished, tiny_grid, tmp_path):
    """The grid run changes (a new MLflow run); the cells whose numbers stand move under it and are
    not logged again (issue 48: bert, temperature and bm25 were logged twice, same numbers)."""
    source, _ = finished
    run_dir = Path(shutil.copytree(source, tmp_path / source.name))
    tracker = Tracker(default_tracking_uri(run_dir), served=True)

    def cells() -> dict[tuple[str, str], list]:
        found: dict[tuple[str, str], list] = {}
        for mlflow_run in tracker.client.search_runs([tracker.experiment_id], max_results=1000):
            if mlflow_run.data.tags[LEVEL_TAG] == "cell":
                tags = mlflow_run.data.tags
                found.setdefault((tags["shift"], tags["method"]), []).append(mlflow_run)
        return found

    before = cells()
    grid = {**tiny_grid, "methods": {**tiny_grid["methods"], "temperature": {}}}
    board = grid_run(GridRequest(grid, run_dir, source="tiny grid and temperature")).board
    after = cells()
    assert set(after) == {*before, ("wikiqa", "temperature")}
    grids = tracker.client.search_runs(
        [tracker.experiment_id], f"tags.`{LEVEL_TAG}` = 'grid'", order_by=["attributes.start_time DESC"]
    )
    assert len(grids) == 2  # the grid changed: a new grid run
    newest = grids[0].info.run_id
    for key, runs in after.items():
        held = [run for run in runs if run.data.tags["mlflow.parentRunId"] == newest]
        assert len(held) == 1, key  # every cell once under the new grid run
    bert = before["wikiqa", "bert"][0].info.run_id
    assert [run.info.run_id for run in after["wikiqa", "bert"]] == [bert]  # moved, not logged again
    (tmp_path / "read").mkdir()
    read = read_tracking(default_tracking_uri(run_dir), None, tmp_path / "read")
    assert list(read.table.method) == list(board.method)
    assert np.allclose(read.table["R@1"], board["R@1"])
