"""A run directory copied or moved elsewhere keeps its MLflow artifacts: its store records no path,
its MLflow runs' artifact roots are `mlflow-artifacts:` URIs, served from the `mlartifacts/` folder beside
the store (bench.results.mlflow_store)."""

import json
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from rankuq.bench.benchmarks.cluster.nodes import mlflow_server
from rankuq.bench.results.boards import read_run_dir, read_tracking
from rankuq.bench.results.mlflow_store import StoreClient, default_tracking_uri
from rankuq.bench.results.tracking import experiment_page, ui_command
from rankuq.errors import RankuqError
from tests.mlflow_runs import mlflow_runs

from ..conftest import free_port


@pytest.fixture
def moved(finished: tuple[Path, pd.DataFrame], tmp_path: Path) -> Path:
    """The tiny grid's run directory copied (`cp -r`) to a new place, and that first copy deleted."""
    first = Path(shutil.copytree(finished[0], tmp_path / "first"))
    moved = Path(shutil.copytree(first, tmp_path / "elsewhere" / "run"))
    shutil.rmtree(first)
    return moved


def bert_plot(run_dir: Path) -> tuple[str, str]:
    """The bert cell's MLflow run id and the name of its reliability diagram."""
    (cell,) = mlflow_runs(run_dir, "cell", "tags.method = 'bert'")
    return cell.info.run_id, "reliability-wikiqa-bert.png"


def test_a_moved_run_directory_keeps_its_artifacts_for_rankuq_s_readers(finished, moved, tmp_path):
    store = (moved / "mlflow.db").read_bytes()
    assert str(finished[0]).encode() not in store and b"file://" not in store  # no path recorded
    uri = default_tracking_uri(moved)
    mlflow_run_id, plot = bert_plot(moved)
    client = StoreClient(uri)
    assert client.get_run(mlflow_run_id).info.artifact_uri == f"mlflow-artifacts:/{mlflow_run_id}/artifacts"
    assert plot in {a.path for a in client.list_artifacts(mlflow_run_id)}
    got = Path(client.download_artifacts(mlflow_run_id, plot, str(tmp_path)))
    assert got.read_bytes() == (moved / "plots" / plot).read_bytes()
    # `rankuq leaderboard --tracking-uri`: the same board and plots as the run directory's own files.
    (tmp_path / "downloads").mkdir()
    from_mlflow = read_tracking(uri, "tiny", tmp_path / "downloads")
    from_dir = read_run_dir(moved)
    pd.testing.assert_frame_equal(from_mlflow.table, from_dir.table, check_dtype=False)
    assert [p.path.read_bytes() for p in from_mlflow.plots] == [p.path.read_bytes() for p in from_dir.plots]
    # The command rankuq prints serves the artifacts from where the run directory is now.
    assert f"--artifacts-destination {moved.resolve() / 'mlartifacts'}`" in experiment_page(uri)


@pytest.mark.slow  # a real `mlflow server` starts in 10-90 s, with the machine's load
def test_mlflow_s_server_serves_a_moved_run_directory_s_artifacts(moved, tmp_path):
    mlflow_run_id, plot = bert_plot(moved)
    expected = (moved / "plots" / plot).read_bytes()
    (tmp_path / "server").mkdir()
    with mlflow_server(tmp_path / "server", free_port(), ui_command(default_tracking_uri(moved))[2:]) as uri:
        client = MlflowClient(uri)  # MLflow's own client, through the server
        assert plot in {a.path for a in client.list_artifacts(mlflow_run_id)}
        assert Path(client.download_artifacts(mlflow_run_id, plot, str(tmp_path))).read_bytes() == expected
        # What the UI's artifact browser and image view ask for.
        query = urllib.parse.urlencode({"run_id": mlflow_run_id})
        with urllib.request.urlopen(f"{uri}/ajax-api/2.0/mlflow/artifacts/list?{query}") as answer:
            listed = json.load(answer)
        assert plot in {entry["path"] for entry in listed["files"]}
        query = urllib.parse.urlencode({"run_uuid": mlflow_run_id, "path": plot})
        with urllib.request.urlopen(f"{uri}/get-artifact?{query}") as answer:
            assert answer.read() == expected


def test_a_store_moved_without_its_artifacts_folder_says_which_folder_is_missing(finished, tmp_path):
    shutil.copy(finished[0] / "mlflow.db", tmp_path / "mlflow.db")
    with pytest.raises(RankuqError, match=f"not in {tmp_path.resolve() / 'mlartifacts'}/.*move that folder"):
        read_tracking(default_tracking_uri(tmp_path), "tiny", tmp_path)
