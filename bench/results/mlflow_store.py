"""The MLflow store of a run: the default SQLite file, and a store prepared (created, or its schema
checked and migrated) before any work starts."""

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path

import mlflow
import mlflow.store
from alembic.script import ScriptDirectory
from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

from rankuq.bench.config.command_inputs import sqlite_path, store_problem
from rankuq.bench.rundir.layout import RunLayout
from rankuq.errors import RankuqError


def default_tracking_uri(run_dir: Path) -> str:
    return RunLayout(run_dir).default_tracking_uri


def prepare_store(uri: str, owned: bool) -> None:
    """Make a SQLite store usable before the run logs to it.

    An absent store is created and migrated under a temporary name, then renamed: a driver killed
    while MLflow builds its tables (a few hundred ms) leaves no half-migrated store. A broken store
    ``owned`` by the run directory (the default ``RUN_DIR/mlflow.db``) is moved aside with one warning
    and made anew (the rerun logs the finished cells again); anyone else's is refused, untouched."""
    path = sqlite_path(uri)
    if path is None:
        return
    problem = store_problem(path, read_only=not owned) or _schema_problem(path)
    if problem and not owned:
        raise RankuqError(
            f"tracking URI {uri}: {path} {problem}; it is left as it is: give a sound store or a new path "
            f"(an older MLflow's store is updated by `mlflow db upgrade {uri}`)"
        )
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
            stale.unlink()
        # A new name each time: MLflow caches an engine (and its open connections) per URI.
        staging = path.with_name(f".{path.name}.tmp-{os.getpid()}-{time.time_ns()}").resolve()
        store = SqlAlchemyStore(f"sqlite:///{staging}", (path.parent / "mlartifacts").resolve().as_uri())
        store.engine.dispose()
        os.replace(staging, path)


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
    if found != [head]:
        return f"has MLflow schema revision {found}, this MLflow expects {head} (half-migrated or older)"
    return None
