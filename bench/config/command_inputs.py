"""What a command was given, checked before the slow imports (Ray, torch, MLflow take seconds) and
before anything is written: the endpoints answer within ``CONNECT_TIMEOUT_S``, folders are
writable folders, and a tracking URI that names a file names an MLflow store."""

import os
import socket
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

from rankuq.errors import RankuqError

CONNECT_TIMEOUT_S = 5.0
RAY_DEFAULT_PORT = 6379
SQLITE_MAGIC = b"SQLite format 3\0"
MLFLOW_TABLES = {"alembic_version", "experiments", "runs"}


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
    folder = Path(uri.removeprefix("file://")) if scheme in ("", "file") else None
    if folder is not None and folder.exists() and not folder.is_dir():
        raise RankuqError(
            f"--tracking-uri {uri}: {folder} is a file, not an MLflow file store (a folder); "
            "give a sqlite:/// URI or a folder"
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
    """``path`` is a folder or can become one: not a file, and its nearest existing parent is writable."""
    if path.exists() and not path.is_dir():
        raise RankuqError(f"{what} {path} is a file, not a folder; give a folder path")
    existing = next(parent for parent in (path, *path.absolute().parents) if parent.exists())
    if not existing.is_dir():
        raise RankuqError(f"{what} {path}: {existing} is a file, not a folder; give a folder path")
    if not os.access(existing, os.W_OK | os.X_OK) or _read_only(existing):
        raise RankuqError(f"{what} {path}: {existing} is not writable (read-only file system or permissions)")


def _read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
