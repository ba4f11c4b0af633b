"""The MLflow store of a run directory: the default SQLite file, a store prepared (created, or its schema
checked and migrated) before any work starts, and the client that reaches its artifacts.

A run directory's store records no path of its own: its MLflow runs' artifact roots are
``mlflow-artifacts:`` URIs (``mlflow-artifacts:/<MLflow run id>/artifacts``), which
``mlflow server --artifacts-destination RUN_DIR/mlartifacts`` serves from that folder, so a copied or
moved run directory keeps its plots and predictions in the UI. MLflow's own client reaches such URIs
only through a server; ``StoreClient`` reads and writes them in the ``mlartifacts/`` folder beside a
SQLite store instead."""

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

import mlflow
import mlflow.store
from alembic.script import ScriptDirectory
from mlflow.entities import FileInfo
from mlflow.store.artifact.local_artifact_repo import LocalArtifactRepository
from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
from mlflow.tracking import MlflowClient

from rankuq.bench.preflight.tracking_inputs import PARTLY_CREATED, sqlite_path, store_problem
from rankuq.bench.rundir.layout import RunLayout
from rankuq.errors import RankuqError

# The root of every artifact a run directory's store holds: the served folder, whatever its path.
PROXIED_ROOT = "mlflow-artifacts:/"
ARTIFACTS_FOLDER = "mlartifacts"  # beside the store: `mlflow server`'s default --artifacts-destination


def default_tracking_uri(run_dir: Path) -> str:
    return RunLayout(run_dir).default_tracking_uri


def artifacts_destination(uri: str) -> Path | None:
    """Where a SQLite store's ``mlflow-artifacts:`` URIs lie: the folder beside it (what
    ``mlflow server --artifacts-destination`` is given to serve them); None for other stores."""
    path = sqlite_path(uri)
    return None if path is None else path.resolve().parent / ARTIFACTS_FOLDER


class StoreClient(MlflowClient):
    """MLflow's client, reaching a SQLite store's ``mlflow-artifacts:`` artifacts in the folder beside
    the store (MLflow's client would need a server for them); any other artifact root as MLflow does."""

    def __init__(self, tracking_uri: str) -> None:
        super().__init__(tracking_uri)
        self.destination = artifacts_destination(tracking_uri)

    def _served(self, mlflow_run_id: str) -> LocalArtifactRepository | None:
        """The folder of ``mlflow_run_id``'s artifacts when they are served ones; None for MLflow to reach."""
        root = self.get_run(mlflow_run_id).info.artifact_uri
        if self.destination is None or urlsplit(root).scheme != "mlflow-artifacts":
            return None
        folder = Path(os.path.normpath(self.destination / urlsplit(root).path.lstrip("/")))
        if not folder.is_relative_to(self.destination):  # a root with '..' in a store from elsewhere
            raise RankuqError(
                f"MLflow run {mlflow_run_id}: artifact root {root} lies outside {self.destination}"
            )
        return LocalArtifactRepository(folder.as_uri())

    # The overrides keep MLflow's own signatures (``run_id``: an MLflow run's id).
    def log_artifact(self, run_id: str, local_path: str, artifact_path: str | None = None) -> None:
        served = self._served(run_id)
        if served is None:
            super().log_artifact(run_id, local_path, artifact_path)
        elif Path(local_path).is_dir():
            served.log_artifacts(local_path, artifact_path)
        else:
            served.log_artifact(local_path, artifact_path)

    def list_artifacts(self, run_id: str, path: str | None = None) -> list[FileInfo]:
        served = self._served(run_id)
        return super().list_artifacts(run_id, path) if served is None else served.list_artifacts(path)

    def download_artifacts(self, run_id: str, path: str, dst_path: str | None = None) -> str:
        served = self._served(run_id)
        if served is None:
            return super().download_artifacts(run_id, path, dst_path)
        if not Path(served.artifact_dir).is_dir():
            raise RankuqError(
                f"MLflow run {run_id}'s artifacts are not in {served.artifact_dir}: a run directory's "
                f"store keeps them in {ARTIFACTS_FOLDER}/ beside it; copy or move that folder with the store"
            )
        return cast(str, served.download_artifacts(path, dst_path))


def prepare_store(uri: str, owned: bool) -> None:
    """Make a SQLite store usable before the grid run logs to it.

    An absent store is created and migrated under a temporary name, then renamed: a driver killed
    while MLflow builds its tables (a few hundred ms) leaves no half-migrated store. A broken store
    ``owned`` by the run directory (the default ``RUN_DIR/mlflow.db``) is moved aside with one warning
    and made anew (the rerun logs the finished cells again); anyone else's is refused, untouched
    (``check_store``)."""
    path = sqlite_path(uri)
    if path is None:
        return
    if not owned:
        check_store(uri)
    problem = owned and _problem(path, read_only=False)
    if problem:
        aside = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(path, aside)
        logging.getLogger(__name__).warning(
            "%s %s: moved to %s, and a new store is made (finished cells are logged again)",
            path,
            problem,
            aside.name,
        )
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f".{path.name}.tmp-*"):  # what a killed creation left
            if not _creator_alive(stale):  # another run making the same store now keeps its own
                stale.unlink(missing_ok=True)
        # A new name each time: MLflow caches an engine (and its open connections) per URI.
        staging = path.with_name(f".{path.name}.tmp-{os.getpid()}-{time.time_ns()}").resolve()
        store = SqlAlchemyStore(f"sqlite:///{staging}", PROXIED_ROOT)
        store.engine.dispose()
        try:
            # link, not replace: of two runs creating one store at once the first wins and the
            # second uses it (a replace swapped the file under the first: "readonly database")
            os.link(staging, path)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            os.replace(staging, path)
        finally:
            staging.unlink(missing_ok=True)


def _creator_alive(staging: Path) -> bool:
    """Whether the process named in a staging store's name (``.NAME.tmp-PID-NS``) still runs."""
    try:
        pid = int(staging.name.rsplit(".tmp-", 1)[1].split("-")[0])
        os.kill(pid, 0)
    except (IndexError, ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def check_store(uri: str) -> None:
    """A SQLite store that exists is sound and of this MLflow's schema, else one line saying what is
    wrong and how to fix it; the file is only read (``rankuq leaderboard`` reads it, MLflow would try
    to create or migrate its tables and fail in a traceback)."""
    path = sqlite_path(uri)
    problem = _problem(path, read_only=True) if path is not None else None
    if problem:
        raise RankuqError(
            f"tracking URI {uri}: {path} {problem}; it is left as it is: give a sound store, or move "
            f"this one aside (`rankuq run` then makes a new one; an older MLflow's store is updated by "
            f"`mlflow db upgrade {uri}`)"
        )


def _problem(path: Path, read_only: bool) -> str | None:
    """Why ``path`` is no usable store (``store_problem``, then its schema revision), or None."""
    return store_problem(path, read_only) or _schema_problem(path)


def _schema_problem(path: Path) -> str | None:
    """A store whose schema is not this MLflow's head revision: left half-migrated, or written by
    another MLflow version (which ``mlflow db upgrade`` would update)."""
    if not path.exists():
        return None
    head = ScriptDirectory(str(Path(mlflow.store.__file__).parent / "db_migrations")).get_current_head()
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            found = [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]
    except sqlite3.Error as error:
        return f"has no readable MLflow schema revision ({error})"
    if not found:
        return PARTLY_CREATED
    if found != [head]:
        return f"has MLflow schema revision {found}, this MLflow expects {head} (half-migrated or older)"
    return None
