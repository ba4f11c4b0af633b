"""What a command was given, checked before anything is written: each bad input is one RankuqError of
one line that names the option and what to do (the command's exit code: tests/bench/cli)."""

import contextlib
import http.server
import json
import os
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mlflow.exceptions import MlflowException
from mlflow.store.tracking.file_store import FileStore
from mlflow.utils.validation import MAX_EXPERIMENT_NAME_LENGTH as MLFLOW_MAX_NAME

from rankuq.backbone import TINY, ModelConfig
from rankuq.bench.config import command_inputs
from rankuq.bench.config.command_inputs import (
    MAX_EXPERIMENT_NAME_LENGTH,
    MLFLOW_TABLES,
    TINY_NAME,
    check_backbone,
    check_endpoint,
    check_experiment,
    check_input_file,
    check_output_folder,
    check_ray_address,
    check_tracking_uri,
    sqlite_path,
    store_problem,
)
from rankuq.errors import RankuqError

NOBODY = 65534


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def one_error(check: Callable[[], None]) -> str:
    with pytest.raises(RankuqError) as raised:
        check()
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_closed_port_is_refused_at_once_naming_the_option():
    port = closed_port()
    message = one_error(lambda: check_endpoint("127.0.0.1", port, "--tracking-uri http://x", timeout=2))
    assert message == (
        f"--tracking-uri http://x: 127.0.0.1:{port} did not accept a connection within 2 s (Connection "
        "refused); check that it is running and the address"
    )
    message = one_error(lambda: check_ray_address(f"ray://127.0.0.1:{port}"))
    assert message.startswith(f"--address ray://127.0.0.1:{port}: 127.0.0.1:{port} did not accept")


@contextlib.contextmanager
def serving(answer: bytes | None) -> Iterator[int]:
    """A TCP server on 127.0.0.1 (its port) that accepts each connection and sends ``answer``, or
    nothing for None, holding it open until the client leaves."""
    with socket.create_server(("127.0.0.1", 0)) as server:

        def serve() -> None:
            with contextlib.suppress(OSError):
                while True:
                    connection, _ = server.accept()
                    if answer is not None:
                        connection.sendall(answer)
                    threading.Thread(target=_hold, args=(connection,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        yield server.getsockname()[1]


def _hold(connection: socket.socket) -> None:
    """Read until the client leaves (or resets), then close."""
    with connection, contextlib.suppress(OSError):
        while connection.recv(1 << 16):
            pass


class _Answers(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_error(404)  # any HTTP status is an answer: what it means, MLflow says

    def log_message(self, *args: object) -> None:
        pass


def test_a_listening_port_passes_the_connection_check():
    with serving(None) as port:
        check_endpoint("127.0.0.1", port, "--address")


def test_an_http_server_passes_as_a_tracking_server():
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        check_tracking_uri(f"http://127.0.0.1:{server.server_address[1]}/")
        server.shutdown()


@pytest.mark.parametrize(
    ("answer", "ray_says", "tracking_says"),
    [
        (None, "gave no answer within 1 s, so it is not Ray", "gave no HTTP answer (no answer within 1 s)"),
        (
            b"220 smtp ready\r\n",
            "answered b'220 smtp ', not gRPC (HTTP/2), so it is not Ray",
            "gave no HTTP answer (not HTTP: BadStatusLine('220 smtp ready\\r\\n'))",
        ),
    ],
    ids=["accepts and never answers", "answers garbage"],
)
def test_a_port_that_accepts_but_is_not_the_service_is_refused_in_time(
    monkeypatch, answer, ray_says, tracking_says
):
    """Ray would log GCS warnings for ever, MLflow wait 120 s a try for 7 tries: one line instead."""
    monkeypatch.setattr(command_inputs, "CONNECT_TIMEOUT_S", 1.0)
    with serving(answer) as port:
        started = time.monotonic()
        message = one_error(lambda: check_ray_address(f"127.0.0.1:{port}"))
        assert message == (
            f"--address 127.0.0.1:{port}: 127.0.0.1:{port} accepted a connection but {ray_says}; give "
            "the head node's address as `ray start --head` printed it (port 6379)"
        )
        uri = f"http://127.0.0.1:{port}"
        assert one_error(lambda: check_tracking_uri(uri)) == (
            f"--tracking-uri {uri}: 127.0.0.1:{port} accepted a connection but {tracking_says}; check "
            "that an MLflow tracking server (`mlflow server`) runs at that address"
        )
        assert time.monotonic() - started < 4  # each probe waits its 1 s at most


def test_a_fifo_or_device_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)  # no writer: opening it to read would block for ever
    assert one_error(lambda: check_input_file(fifo, "--run")) == (
        f"--run {fifo}: a FIFO (named pipe), not a regular file (opening it may wait for ever); it must "
        "be a regular file: give the path of one"
    )
    assert one_error(lambda: check_input_file(Path("/dev/zero"), "--qrels")).startswith(
        "--qrels /dev/zero: a device or socket, not a regular file"
    )
    check_input_file(tmp_path / "absent.txt", "--run")  # the reader names a missing file
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 0.5 t\n")
    check_input_file(tmp_path / "run.txt", "--run")


@pytest.mark.parametrize("address", [None, "auto", "local"])
def test_addresses_ray_resolves_itself_are_not_dialled(address):
    check_ray_address(address)


@pytest.mark.parametrize("address", ["127.0.0.1:notaport", ":6379", "ray://:6379"])
def test_an_address_that_is_not_host_port_is_refused(address):
    assert one_error(lambda: check_ray_address(address)) == (
        f"--address {address}: not host:port; e.g. --address 10.0.0.5:6379"
    )


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


def test_an_output_folder_that_is_a_file_or_under_one_is_refused(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert one_error(lambda: check_output_folder(afile, "--out")) == (
        f"--out {afile} is a file, not a folder; give a folder path"
    )
    assert one_error(lambda: check_output_folder(afile / "run", "--run-dir")) == (
        f"--run-dir {afile / 'run'}: {afile} is a file, not a folder; give a folder path"
    )
    check_output_folder(tmp_path / "new" / "run", "--run-dir")  # its nearest existing parent: writable
    assert not (tmp_path / "new").exists()


def _as_nobody(check: Callable[[], None]) -> str:
    """``check``'s RankuqError message (or "") in a forked child running as user nobody: root may write
    into any folder, so a folder's permissions refuse only another user."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's exit handlers
        message = b"no error"
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            check()
        except RankuqError as error:
            message = str(error).encode()
        except BaseException as error:  # reported to the parent
            message = f"{type(error).__name__}: {error}".encode()
        finally:
            os.write(write, message)
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        message = answer.read().decode()
    os.waitpid(pid, 0)
    return message


def test_an_output_folder_in_a_folder_nobody_may_write_is_refused():
    # Under /tmp, not pytest's tmp_path: its folders are root's alone, user nobody could not look in.
    parent = Path(tempfile.mkdtemp(prefix="rankuq-test-"))
    try:
        parent.chmod(0o755)
        locked = parent / "locked"
        locked.mkdir(mode=0o555)
        target = locked / "run"
        expected = f"--run-dir {target}: {locked} is not writable (read-only file system or permissions)"
        if os.geteuid() == 0:
            assert _as_nobody(lambda: check_output_folder(target, "--run-dir")) == expected
        else:
            assert one_error(lambda: check_output_folder(target, "--run-dir")) == expected
        assert not target.exists()
    finally:
        shutil.rmtree(parent)


def _no_weights(folder: Path) -> str:
    (folder / "model.safetensors").unlink()
    return r"has a config.json but no weights \(model.safetensors, model.safetensors.index.json"


def _lost_shard(folder: Path) -> str:
    (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return r"lacks 1 of the 2 weight shards its model.safetensors.index.json names \(e.g. model-00002-of"


def _no_tokenizer(folder: Path) -> str:
    (folder / "tokenizer.json").unlink()  # the one tokenizer file save_pretrained writes
    return r"has no tokenizer \(tokenizer.json, vocab.txt"


def _bad_config(folder: Path) -> str:
    (folder / "config.json").write_text('{"model_type": "no-such-architecture"}')
    return r"its config does not load \(.*no-such-architecture"


@pytest.mark.parametrize("breaks", [_no_weights, _lost_shard, _no_tokenizer, _bad_config])
def test_a_backbone_folder_that_cannot_load_is_one_line_naming_it(cross_encoder, tmp_path, breaks):
    folder = shutil.copytree(cross_encoder, tmp_path / "checkpoint")
    match = breaks(folder)
    with pytest.raises(RankuqError, match=rf"model.backbone {folder}: .*{match}") as error:
        check_backbone(ModelConfig(backbone=str(folder)))
    assert "\n" not in str(error.value)


def test_a_hub_name_without_the_hub_or_a_cache_is_refused_at_once(tmp_path, monkeypatch):
    with socket.socket() as probe:  # a port nobody listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(
        RankuqError, match=r"model.backbone org/model: no such folder, and 127.0.0.1 cannot be"
    ):
        check_backbone(ModelConfig(backbone="org/model"))


def test_a_loadable_checkpoint_and_the_shipped_minilm_pass(cross_encoder):
    check_backbone(ModelConfig(backbone=str(cross_encoder)))
    check_backbone(ModelConfig())
    assert TINY_NAME == TINY  # the name command_inputs knows without importing torch


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_that_takes_no_file_is_refused_though_permissions_allow(tmp_path):
    """Root passes os.access on /proc, which takes no new file: the check makes (and removes) one."""
    message = one_error(lambda: check_output_folder(Path("/proc/run"), "--run-dir"))
    if os.geteuid() == 0:
        assert message == (
            "--run-dir /proc/run: /proc is not writable (a test file could not be made there: No such file "
            "or directory); give a folder on a writable file system"
        )
    else:
        assert message.startswith("--run-dir /proc/run: /proc is not writable")
    check_output_folder(tmp_path / "run", "--run-dir")
    assert not list(tmp_path.iterdir())  # the test file is gone
