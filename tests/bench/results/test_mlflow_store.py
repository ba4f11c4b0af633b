"""The default store of a run directory: a new store appears only whole, a broken own store is rebuilt,
anyone else's is refused untouched."""

import sqlite3
import time
from pathlib import Path

import pytest

from rankuq.bench.preflight.tracking_inputs import MLFLOW_TABLES, store_problem
from rankuq.errors import RankuqError


def _mlflow_like(path: Path, extra_table: str | None = None) -> None:
    with sqlite3.connect(path) as db:
        for table in (*MLFLOW_TABLES, *([extra_table] if extra_table else [])):
            db.execute(f"CREATE TABLE {table} (version_num)")
    db.close()


def test_a_new_store_appears_only_whole_and_a_broken_own_store_is_rebuilt(tmp_path, caplog):
    from rankuq.bench.results.mlflow_store import prepare_store
    from rankuq.bench.results.tracking import Tracker

    store = tmp_path / "mlflow.db"
    uri = f"sqlite:///{store}"
    (tmp_path / ".mlflow.db.tmp-999999999-2").write_bytes(b"what a killed creation left")  # no such pid
    prepare_store(uri, owned=True)
    assert store_problem(store) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db"]
    assert Tracker(uri).experiment_id  # MLflow reads and writes it
    assert not [r for r in caplog.records if r.levelname == "WARNING"]

    broken = [
        lambda: _mlflow_like(_fresh(store), "_alembic_tmp_trace_tags"),
        lambda: store.write_bytes(store.read_bytes()[:5000]),
        lambda: (
            sqlite3.connect(store)
            .execute("UPDATE alembic_version SET version_num = 'abc'")
            .connection.commit()
        ),
    ]
    for number, damage in enumerate(broken, start=1):
        damage()
        prepare_store(uri, owned=True)
        assert store_problem(store) is None
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert len(warnings) == number and warnings[-1].startswith(f"{store} ")
        assert "a new store is made" in warnings[-1]
        time.sleep(1.1)  # the moved-aside name carries the second
    assert len(list(tmp_path.glob("mlflow.db.broken-*"))) == len(broken)


def test_someone_elses_broken_store_is_refused_untouched(tmp_path):
    from rankuq.bench.results.mlflow_store import prepare_store

    store = tmp_path / "theirs.db"
    _mlflow_like(store)
    with sqlite3.connect(store) as db:
        db.execute("INSERT INTO alembic_version VALUES ('0123')")
    db.close()
    before = store.read_bytes()
    with pytest.raises(RankuqError, match=r"theirs.db has MLflow schema revision \['0123'\]"):
        prepare_store(f"sqlite:///{store}", owned=False)
    assert store.read_bytes() == before and sorted(tmp_path.iterdir()) == [store]


def _fresh(path: Path) -> Path:
    path.unlink()
    return path


def test_of_two_runs_creating_one_store_the_first_wins_and_the_second_uses_it(tmp_path, monkeypatch):
    """Issue 48: two runs creating one fresh external store at once: the second replaced the file
    under the first ("attempt to write a readonly database"). Now the second finds it made and keeps
    it; a staging file of a run still alive is left to it."""
    import os

    from rankuq.bench.results import mlflow_store

    path = tmp_path / "shared" / "mlflow.db"
    uri = f"sqlite:///{path}"
    path.parent.mkdir()
    alive = path.with_name(f".{path.name}.tmp-{os.getpid()}-1")  # another run's, creating now
    alive.write_bytes(b"")
    link = os.link

    def the_other_run_first(source, target):
        monkeypatch.setattr(os, "link", link)
        mlflow_store.prepare_store(uri, owned=False)  # it publishes its store meanwhile
        link(source, target)

    monkeypatch.setattr(os, "link", the_other_run_first)
    mlflow_store.prepare_store(uri, owned=False)
    monkeypatch.undo()
    assert store_problem(path) is None and alive.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == [alive.name, "mlflow.db"]
