"""Where a command's MLflow records go, checked before MLflow is imported (it takes seconds) and
before anything is written: a tracking server answers in HTTP within ``CONNECT_TIMEOUT_S``, a
tracking URI that names a file names an MLflow store MLflow opens (the check never writes: a file
that is not a store is refused, never turned into one), and the experiment's name is one MLflow
takes. MLflow itself would find each only when the run logs, after every stage."""

import http.client
import os
import sqlite3
import ssl
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import urlopen

from rankuq.bench.preflight import addresses  # CONNECT_TIMEOUT_S read when dialling: one for every probe
from rankuq.errors import RankuqError

SQLITE_MAGIC = b"SQLite format 3\0"
MLFLOW_TABLES = {"alembic_version", "experiments", "runs"}
PARTLY_CREATED = "is an MLflow store left partly created, with no schema revision (an interrupted first run)"
MAX_EXPERIMENT_NAME_LENGTH = 500  # mlflow.utils.validation's (not imported here: MLflow takes seconds)


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
        addresses.check_endpoint(parts.hostname or "", port, f"--tracking-uri {uri}")
        _check_http_answer(uri, f"{parts.hostname}:{port}", addresses.CONNECT_TIMEOUT_S)
        return
    path = sqlite_path(uri)
    if path is not None:
        problem = store_problem(path)
        if problem:
            raise RankuqError(
                f"--tracking-uri {uri}: {path} {problem}; it is left as it is: give the store "
                "`rankuq run` wrote, or a path that does not exist yet"
            )
        _check_writable(path, uri)
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


def _check_writable(path: Path, uri: str) -> None:
    """A store the run can write: checked before any work, not once every stage has run (SQLite
    writes the store and, beside it, its journal; a read-only mount refuses both)."""
    home = next((folder for folder in path.parents if folder.exists()), None)
    refused = [
        where
        for where in (path, home)
        if where is not None and where.exists() and not os.access(where, os.W_OK)
    ]
    if refused:
        raise RankuqError(
            f"--tracking-uri {uri}: {refused[0]} cannot be written (a read-only mount or no permission); "
            "give a store in a folder you may write to"
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


def _file_store_allowed() -> bool:
    """MLflow's opt-in to its file store ($MLFLOW_ALLOW_FILE_STORE, read as mlflow reads it)."""
    return os.environ.get("MLFLOW_ALLOW_FILE_STORE", "false").lower() in ("true", "1")


def experiment_option(given: str | None) -> str:
    """Where the experiment's name came from (``given``: the one passed), for its error line."""
    return "--experiment" if given else "$MLFLOW_EXPERIMENT_NAME"


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
    if (MLFLOW_TABLES - {"alembic_version"}).issubset(tables) and "alembic_version" not in tables:
        return PARTLY_CREATED
    if not MLFLOW_TABLES.issubset(tables):
        return "is a SQLite file without MLflow's tables"
    return None
