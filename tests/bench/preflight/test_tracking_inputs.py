"""Where a command's MLflow records go, checked before anything is written: each bad tracking URI or
experiment name is one RankuqError of one line that names the option and what to do (the command's
exit code: tests/bench/cli); a file that is not a store is left as it is."""

import http.server
import sqlite3
import threading
from pathlib import Path

import pytest
from mlflow.exceptions import MlflowException
from mlflow.store.tracking.file_store import FileStore
from mlflow.utils.validation import MAX_EXPERIMENT_NAME_LENGTH as MLFLOW_MAX_NAME

from rankuq.bench.preflight.tracking_inputs import (
    MAX_EXPERIMENT_NAME_LENGTH,
    MLFLOW_TABLES,
    check_experiment,
    check_tracking_uri,
    sqlite_path,
    store_problem,
)

from .conftest import one_error


class _Answers(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)  # any HTTP status is an answer: what it means, MLflow says

    def log_message(self, *args: object) -> None:
        pass


def test_an_http_server_passes_as_a_tracking_server():
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        check_tracking_uri(f"http://127.0.0.1:{server.server_address[1]}/")
        server.shutdown()


def _mlflow_like(path: Path, *extra: str) -> Path:
    with sqlite3.connect(path) as db:
        for table in (*MLFLOW_TABLES, *extra):
            db.execute(f"CREATE TABLE {table} (version_num)")
    db.close()
    return path


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("sqlite://x.db", "tracking URI sqlite://x.db: a SQLite store is sqlite:///relative/path.db or"),
        ("sqlite:///", "tracking URI sqlite:///: a SQLite store is sqlite:///relative/path.db"),
        ("http://127.0.0.1:notaport", "--tracking-uri http://127.0.0.1:notaport: not a valid URL; e.g. http"),
    ],
)
def test_a_malformed_tracking_uri_is_refused(uri, message):
    assert one_error(lambda: check_tracking_uri(uri)).startswith(message)


def test_a_tracking_uri_naming_a_file_that_is_no_store_is_refused_untouched(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # a file store at all: MLflow's opt-in
    notes = tmp_path / "notes.db"
    notes.write_text("my notes\n")
    message = one_error(lambda: check_tracking_uri(f"sqlite:///{notes}"))
    assert message == (
        f"--tracking-uri sqlite:///{notes}: {notes} is not a SQLite file (9 bytes); it is left as it "
        "is: give the store `rankuq run` wrote, or a path that does not exist yet"
    )
    assert notes.read_text() == "my notes\n"
    folder_store = f"file://{notes}"
    assert one_error(lambda: check_tracking_uri(folder_store)).startswith(
        f"--tracking-uri {folder_store}: {notes} is a file, not an MLflow file store (a folder)"
    )


def test_a_new_or_sound_store_and_a_folder_store_mlflow_opens_pass(tmp_path, monkeypatch):
    check_tracking_uri(f"sqlite:///{tmp_path / 'new.db'}")  # made by the run
    check_tracking_uri(f"sqlite:///{_mlflow_like(tmp_path / 'mlflow.db')}")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "1")
    check_tracking_uri(str(tmp_path))  # a file store: a folder, where the user opted in
    assert not (tmp_path / "new.db").exists()  # the check writes nothing


@pytest.mark.parametrize("uri", ["mlruns", "file:///tmp/mlruns", "./mlruns"])
def test_a_file_store_is_refused_as_mlflow_refuses_it(uri, monkeypatch, tmp_path):
    """MLflow opens no file store unless $MLFLOW_ALLOW_FILE_STORE: refused before the run, not after."""
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    with pytest.raises(MlflowException, match="maintenance mode"):
        FileStore(str(tmp_path))
    assert one_error(lambda: check_tracking_uri(uri)) == (
        f"--tracking-uri {uri}: a folder (MLflow's file store), which MLflow no longer opens (its "
        "filesystem backend is in maintenance mode); give a SQLite store such as sqlite:///mlflow.db "
        "or a server such as http://localhost:5000"
    )


def test_an_experiment_name_longer_than_mlflow_takes_is_refused():
    assert MAX_EXPERIMENT_NAME_LENGTH == MLFLOW_MAX_NAME
    check_experiment("e" * MLFLOW_MAX_NAME, "--experiment")
    assert one_error(lambda: check_experiment("e" * 5000, "--experiment")) == (
        f"--experiment {'e' * 20}…: 5,000 characters, and MLflow takes at most {MLFLOW_MAX_NAME}; "
        "give a shorter experiment name"
    )


def test_store_problems_are_named_by_what_the_file_is(tmp_path):
    assert store_problem(tmp_path / "absent.db") is None
    assert store_problem(tmp_path) == "is not a file"
    (tmp_path / "empty.db").write_bytes(b"")
    assert store_problem(tmp_path / "empty.db") == "is empty (0 bytes)"
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (x)").connection.commit()
    assert store_problem(other) == "is a SQLite file without MLflow's tables"
    half = _mlflow_like(tmp_path / "half.db", "_alembic_tmp_runs")
    assert store_problem(half) == "is an MLflow store left half-migrated (an interrupted first run)"
    cut = tmp_path / "cut.db"
    cut.write_bytes(_mlflow_like(tmp_path / "whole.db").read_bytes()[:3000])  # a header, half a page
    assert store_problem(cut).startswith("is a damaged SQLite file")


def test_sqlite_path_is_the_file_of_three_slash_uris_only():
    assert sqlite_path("sqlite:///runs/a/mlflow.db") == Path("runs/a/mlflow.db")
    assert sqlite_path("sqlite:////abs/mlflow.db") == Path("/abs/mlflow.db")
    assert sqlite_path("http://localhost:5000") is None


def test_a_store_on_a_read_only_mount_is_refused_before_any_work(tmp_path, monkeypatch):
    """Issue 48: a store on a read-only mount failed once the whole grid had run. (The run's user is
    root here, whom permission bits do not stop: the mount's refusal is os.access's answer, stood in.)"""
    import os

    import pytest

    from rankuq.bench.preflight import tracking_inputs
    from rankuq.errors import RankuqError

    mount = tmp_path / "ro"
    mount.mkdir()
    access = os.access

    def mounted_read_only(path: str, mode: int) -> bool:
        return access(path, mode) and mount not in (Path(path), *Path(path).parents)

    monkeypatch.setattr(os, "access", mounted_read_only)
    with pytest.raises(RankuqError, match=r"ro cannot be written \(a read-only mount or no permission\)"):
        tracking_inputs.check_tracking_uri(f"sqlite:///{mount}/mlflow.db")
    tracking_inputs.check_tracking_uri(f"sqlite:///{tmp_path}/mlflow.db")  # a folder it may write to
