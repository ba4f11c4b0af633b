"""``rankuq tasks`` and ``rankuq methods``: the registries listed."""

import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Protocol, TypeVar

import rankuq
from rankuq.bench.cli.common import _print_table
from rankuq.bench.rundir.atomic import atomic_write

T = TypeVar("T", covariant=True)


class _Listed(Protocol[T]):
    """A package that lists its registry: ``names()`` and ``get(name)`` (tasks, negatives, methods)."""

    @property
    def names(self) -> Callable[[], list[str]]: ...

    @property
    def get(self) -> Callable[[str], T]: ...


def _list_tasks() -> None:
    from rankuq import tasks
    from rankuq.tasks import lists, negatives

    rows = [[name, task.description, ", ".join(task.files)] for name, task in _entries(tasks)]
    _print_table("tasks", ["name", "description", "files (under the data folder)"], rows)
    print(f"your own data as a task: {', '.join(tasks.family_names())} (README, 'A grid file')")
    rows = [[name, strategy.description] for name, strategy in _entries(negatives)]
    _print_table("negative-sampling strategies", ["name", "description"], rows)
    print(f"list variants: {', '.join(lists.VARIANTS)}")


def _list_methods() -> None:
    _print_table("methods", ["name", "description", "parameters (defaults)"], _cached(_method_rows))


def _method_rows() -> list[list[str]]:
    from rankuq import methods

    return [
        [
            name,
            method.description,
            ", ".join(f"{k}={f.default}" for k, f in method.Params.model_fields.items()),
        ]
        for name, method in _entries(methods)
    ]


def _cached(rows: Callable[[], list[list[str]]]) -> list[list[str]]:
    """The rows kept in the user's cache while the methods' source files and the installed plugins
    stay as they were: listing them anew imports torch and every method (10 s on a busy machine)."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rankuq"
    path = folder / f"methods-{_methods_key()}.json"
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    found = rows()
    with contextlib.suppress(OSError):  # no cache where none can be written
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("methods-*.json"):  # older code's
            stale.unlink()
        atomic_write(path, json.dumps(found))
    return found


def _methods_key() -> str:
    """rankuq's version, each file of rankuq.methods and of rankuq's own top level, where the
    methods' parameters come from (backbone, registry) (name, size, modification time), and each
    plugin's entry point and distribution version, hashed."""
    spec = importlib.util.find_spec("rankuq.methods")  # imports rankuq, not the methods
    folders = [*(spec.submodule_search_locations or [] if spec else []), *rankuq.__path__]
    files = sorted(path for folder in folders for path in Path(folder).glob("*.py"))
    plugins = entry_points(group="rankuq.methods")
    key = [
        rankuq.__version__,
        [(path.name, path.stat().st_size, path.stat().st_mtime_ns) for path in files],
        sorted(
            (p.name, p.value, p.dist.name if p.dist else "", p.dist.version if p.dist else "")
            for p in plugins
        ),
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]


def _entries(package: _Listed[T]) -> list[tuple[str, T]]:
    return [(name, package.get(name)) for name in package.names()]
