"""What a command was given, checked before the slow imports (Ray, torch, MLflow take seconds) and
before anything is written: the endpoints answer within ``CONNECT_TIMEOUT_S``, folders are
writable folders, a tracking URI that names a file names an MLflow store MLflow opens, and the
experiment's name is one MLflow takes."""

import http.client
import json
import os
import socket
import sqlite3
import ssl
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import urlopen

from rankuq.errors import RankuqError

if TYPE_CHECKING:  # rankuq.backbone imports torch (seconds): the grid's loading has it by then
    from rankuq.backbone import ModelConfig

CONNECT_TIMEOUT_S = 5.0
RAY_DEFAULT_PORT = 6379
SQLITE_MAGIC = b"SQLite format 3\0"
MLFLOW_TABLES = {"alembic_version", "experiments", "runs"}
MAX_EXPERIMENT_NAME_LENGTH = 500  # mlflow.utils.validation's (not imported here: MLflow takes seconds)


def check_endpoint(host: str, port: int, what: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """A TCP connection to ``host:port`` opens within ``timeout`` seconds, or one error naming ``what``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or str(error)
        raise RankuqError(
            f"{what}: {host}:{port} did not accept a connection within {timeout:g} s ({reason}); "
            "check that it is running and the address"
        ) from None


def check_ray_address(address: str | None) -> None:
    """An explicit ``host:port`` (or ``ray://host:port``) Ray address answers; 'auto' and None are
    resolved by Ray itself (None starts a local Ray)."""
    if address is None or address == "auto" or address == "local":
        return
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = parts.port or RAY_DEFAULT_PORT
    except ValueError:
        raise RankuqError(f"--address {address}: not host:port; e.g. --address 10.0.0.5:6379") from None
    if not parts.hostname:
        raise RankuqError(f"--address {address}: not host:port; e.g. --address 10.0.0.5:6379")
    check_endpoint(parts.hostname, port, f"--address {address}")
    problem = _grpc_problem(parts.hostname, port, CONNECT_TIMEOUT_S)
    if problem:  # Ray would log GCS warnings and wait for ever
        raise RankuqError(
            f"--address {address}: {parts.hostname}:{port} accepted a connection but {problem}, so it "
            "is not Ray; give the head node's address as `ray start --head` printed it (port 6379)"
        )


# HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113 3.4, 6.5): a gRPC server,
# as Ray's GCS and Ray Client are, answers with its own SETTINGS frame. Spelled out here because
# this environment has no grpcio (Ray's core links its own).
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_SETTINGS = 4


def _grpc_problem(host: str, port: int, timeout: float) -> str | None:
    """None where ``host:port`` answers HTTP/2's preface with a SETTINGS frame within ``timeout``
    seconds; else what it did instead."""
    answer = b""
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.sendall(HTTP2_PREFACE)
            # a frame header is 9 bytes, its 4th the type: anything else is known from that byte on
            while len(answer) < 9 and (len(answer) < 4 or answer[3] == HTTP2_SETTINGS):
                chunk = connection.recv(9 - len(answer))
                if not chunk:
                    break
                answer += chunk
    except TimeoutError:
        return f"gave no answer within {timeout:g} s" if not answer else f"answered only {answer!r}"
    except OSError as error:
        return f"closed it ({error.strerror or error})"
    if len(answer) < 9 or answer[3] != HTTP2_SETTINGS:
        return f"answered {answer!r}, not gRPC (HTTP/2)"
    return None


def sqlite_path(uri: str) -> Path | None:
    """The file of a ``sqlite:///`` URI; None for other schemes. ``sqlite://x.db`` (two slashes,
    read as a host name) is refused."""
    if not uri.startswith("sqlite:"):
        return None
    if not uri.startswith("sqlite:///") or uri == "sqlite:///":
        raise RankuqError(
            f"tracking URI {uri}: a SQLite store is sqlite:///relative/path.db or sqlite:////absolute/path.db"
        )
    return Path(uri.removeprefix("sqlite:///"))


def check_tracking_uri(uri: str) -> None:
    """A tracking server answers; a store file is an MLflow store (or absent: a new store is made).
    Never writes: a file that is not a store is refused, never turned into one."""
    scheme = urlsplit(uri).scheme
    if scheme in ("http", "https"):
        parts = urlsplit(uri)
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise RankuqError(f"--tracking-uri {uri}: not a valid URL; e.g. http://localhost:5000") from None
        check_endpoint(parts.hostname or "", port, f"--tracking-uri {uri}")
        _check_http_answer(uri, f"{parts.hostname}:{port}", CONNECT_TIMEOUT_S)
        return
    path = sqlite_path(uri)
    if path is not None:
        problem = store_problem(path)
        if problem:
            raise RankuqError(
                f"--tracking-uri {uri}: {path} {problem}; it is left as it is: give the store "
                "`rankuq run` wrote, or a path that does not exist yet"
            )
        return
    if scheme not in ("", "file"):
        return
    if not _file_store_allowed():  # MLflow would refuse it only once the run logs, after every stage
        raise RankuqError(
            f"--tracking-uri {uri}: a folder (MLflow's file store), which MLflow no longer opens (its "
            "filesystem backend is in maintenance mode); give a SQLite store such as sqlite:///mlflow.db "
            "or a server such as http://localhost:5000"
        )
    folder = Path(uri.removeprefix("file://"))
    if folder.exists() and not folder.is_dir():
        raise RankuqError(
            f"--tracking-uri {uri}: {folder} is a file, not an MLflow file store (a folder); "
            "give a sqlite:/// URI or a folder"
        )


def _check_http_answer(uri: str, where: str, timeout: float) -> None:
    """The tracking server answers an MLflow API request in HTTP within ``timeout`` seconds (MLflow's
    client would wait 120 s a try, 7 tries). Any status is an answer: what it means MLflow says."""
    try:
        urlopen(f"{uri.rstrip('/')}/api/2.0/mlflow/experiments/search?max_results=1", timeout=timeout).close()
        return
    except HTTPError:
        return
    except (OSError, http.client.HTTPException) as error:
        cause = error.reason if isinstance(error, URLError) else error
        if isinstance(cause, ssl.SSLCertVerificationError):
            return  # TLS answered; its certificate is MLflow's matter (MLFLOW_TRACKING_INSECURE_TLS)
        reason = (
            f"no answer within {timeout:g} s" if isinstance(cause, TimeoutError) else f"not HTTP: {cause!r}"
        )
    raise RankuqError(
        f"--tracking-uri {uri}: {where} accepted a connection but gave no HTTP answer ({reason}); "
        "check that an MLflow tracking server (`mlflow server`) runs at that address"
    )


def check_input_file(path: Path, option: str) -> None:
    """``path``, where it exists, is a regular file: a FIFO, socket or device would block the read
    (a FIFO with no writer for ever) or never end. Asks the file system only; opens nothing."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # absent or unreadable: the reader names it
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device or socket"
        raise RankuqError(
            f"{option} {path}: {kind}, not a regular file (opening it may wait for ever); it must be a "
            "regular file: give the path of one"
        )


def _file_store_allowed() -> bool:
    """MLflow's opt-in to its file store ($MLFLOW_ALLOW_FILE_STORE, read as mlflow reads it)."""
    return os.environ.get("MLFLOW_ALLOW_FILE_STORE", "false").lower() in ("true", "1")


def check_experiment(name: str, option: str) -> None:
    """An MLflow experiment name MLflow takes (it checks only when the run logs, after the work)."""
    if len(name) > MAX_EXPERIMENT_NAME_LENGTH:
        raise RankuqError(
            f"{option} {name[:20]}…: {len(name):,} characters, and MLflow takes at most "
            f"{MAX_EXPERIMENT_NAME_LENGTH}; give a shorter experiment name"
        )


def store_problem(path: Path, read_only: bool = True) -> str | None:
    """Why the file at ``path`` is not a usable MLflow SQLite store, or None (absent or sound).

    ``read_only`` opens it so, and a file that is not a store is never changed; a store of our own
    is opened read-write, so SQLite rolls back what a killed writer left in its journal."""
    if not path.exists():
        return None
    if not path.is_file():
        return "is not a file"
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        return f"is not a SQLite file ({path.stat().st_size} bytes)" if head else "is empty (0 bytes)"
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}", uri=True)
    except sqlite3.Error as error:
        return f"cannot be opened as SQLite ({error})"
    try:
        if db.execute("PRAGMA quick_check").fetchone() != ("ok",):
            return "is a damaged SQLite file"
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as error:
        return f"is a damaged SQLite file ({error})"
    finally:
        db.close()
    if any(name.startswith("_alembic_tmp_") for name in tables):
        return "is an MLflow store left half-migrated (an interrupted first run)"
    if not MLFLOW_TABLES.issubset(tables):
        return "is a SQLite file without MLflow's tables"
    return None


def check_output_folder(path: Path, what: str) -> None:
    """``path`` is a folder or can become one: not a file, and its nearest existing parent is writable,
    as a file made and removed there shows (root passes every permission check, yet /proc takes no
    file)."""
    if path.exists() and not path.is_dir():
        raise RankuqError(f"{what} {path} is a file, not a folder; give a folder path")
    existing = next(parent for parent in (path, *path.absolute().parents) if parent.exists())
    if not existing.is_dir():
        raise RankuqError(f"{what} {path}: {existing} is a file, not a folder; give a folder path")
    if not os.access(existing, os.W_OK | os.X_OK) or _read_only(existing):
        raise RankuqError(f"{what} {path}: {existing} is not writable (read-only file system or permissions)")
    try:
        with tempfile.TemporaryFile(dir=existing, prefix=".rankuq-probe-"):
            pass
    except OSError as error:
        raise RankuqError(
            f"{what} {path}: {existing} is not writable (a test file could not be made there: "
            f"{error.strerror or error}); give a folder on a writable file system"
        ) from None


def check_output_file(path: Path, what: str, example: str) -> None:
    """``path`` can be written as a file: not a folder, and its folder passes ``check_output_folder``."""
    if path.is_dir():
        raise RankuqError(f"{what} {path} is a folder; give a file path such as {example}")
    check_output_folder(path.parent, what)


def _read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


# What a checkpoint folder holds: its weights (whole, or an index of shards) and its tokenizer.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")
HUB = "huggingface.co"
TINY_NAME = "tiny"  # rankuq.backbone.TINY, which is not imported here: that module imports torch


def locate_backbone(backbone: str | None) -> tuple[str, bool] | None:
    """Where ``model.backbone``'s files are, checked without torch or transformers (so before the
    grid's imports): a folder's config.json, weights (or the shards its index names) and tokenizer;
    a hub name's hub answering, or its files cached. Returns (folder or hub name, whether only the
    hub cache has it); None for the shipped MiniLM (the default, and ``tiny``'s tokenizer)."""
    if backbone in (None, TINY_NAME):
        return None
    where = f"model.backbone {backbone}"
    folder = Path(backbone).expanduser()
    if folder.exists():
        _check_folder(folder, where)
        return str(folder), False
    if backbone.startswith(("/", ".", "~")) or backbone.count("/") > 1:  # a path, not a hub name
        raise RankuqError(
            f"{where}: no such folder; give a checkpoint folder (config.json, weights, tokenizer)"
        )
    return backbone, _hub_offline(backbone, where)


def check_backbone(config: "ModelConfig") -> None:
    """``model.backbone`` loads, checked before Ray starts (a trial would fail on it after a minute):
    its files (``locate_backbone``), then its config and tokenizer as transformers loads them."""
    located = locate_backbone(config.backbone)
    if located is None:
        return
    source, offline = located
    from transformers import AutoConfig, AutoTokenizer

    for what, load in (("config", AutoConfig.from_pretrained), ("tokenizer", AutoTokenizer.from_pretrained)):
        try:
            load(source, local_files_only=offline)
        except (OSError, ValueError, KeyError) as error:
            reason = " ".join(str(error).split())[:200]
            raise RankuqError(
                f"model.backbone {config.backbone}: its {what} does not load ({reason})"
            ) from None


def _check_folder(folder: Path, where: str) -> None:
    """The files a checkpoint folder needs are there (and a weights index's shards)."""
    if not folder.is_dir():
        raise RankuqError(f"{where}: a file, not a checkpoint folder (config.json, weights, tokenizer)")
    if not (folder / "config.json").is_file():
        raise RankuqError(f"{where}: {folder} has no config.json; give a save_pretrained folder")
    names = [name for weights in WEIGHT_FILES for name in (weights, f"{weights}.index.json")]
    found = [name for name in names if (folder / name).is_file()]
    if not found:
        raise RankuqError(
            f"{where}: {folder} has a config.json but no weights ({', '.join(names)}); save the model "
            "with save_pretrained, or give the folder that holds its weights"
        )
    if found[0].endswith(".index.json"):
        try:
            shards = sorted(set(json.loads((folder / found[0]).read_text())["weight_map"].values()))
        except (ValueError, KeyError, AttributeError) as error:
            raise RankuqError(f"{where}: {folder / found[0]} is no weights index ({error})") from None
        missing = [shard for shard in shards if not (folder / shard).is_file()]
        if missing:
            raise RankuqError(
                f"{where}: {folder} lacks {len(missing)} of the {len(shards)} weight shards its "
                f"{found[0]} names (e.g. {missing[0]}); copy the whole checkpoint folder"
            )
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise RankuqError(
            f"{where}: {folder} has no tokenizer ({', '.join(TOKENIZER_FILES)}); save it beside the "
            "model (tokenizer.save_pretrained(folder))"
        )


def _hub_offline(name: str, where: str) -> bool:
    """True where the hub does not answer but ``name``'s files are cached; refused where neither."""
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT", f"https://{HUB}"))
    host = endpoint.hostname or HUB
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() not in ("1", "true"):
        try:
            check_endpoint(host, endpoint.port or 443, where, timeout=CONNECT_TIMEOUT_S)
            return False
        except RankuqError:
            pass
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return True
    raise RankuqError(
        f"{where}: no such folder, and {host} cannot be reached to download it as a hub model (nor is "
        "it cached); give a local checkpoint folder, or run where the hub answers"
    )
