"""``rankuq tasks``, ``methods``, ``probes`` and ``metrics``: the registries listed, as tables or JSON."""

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import rankuq
from rankuq.atomic import atomic_write
from rankuq.bench.cli.common import print_note, print_table
from rankuq.registry import description_of

T = TypeVar("T", covariant=True)
CACHE_FORMAT = 2  # of the methods' cached listing: 2, a record per method (1: table rows)


class _Listed(Protocol[T]):
    """A package that lists its registry: ``names()`` and ``get(name)`` (tasks, negatives, methods)."""

    @property
    def names(self) -> Callable[[], list[str]]: ...

    @property
    def get(self) -> Callable[[str], T]: ...


def list_tasks(args: argparse.Namespace) -> None:
    from rankuq import tasks
    from rankuq.tasks import lists, negatives

    found = [{"name": n, "description": t.description, "files": list(t.files)} for n, t in _entries(tasks)]
    strategies = [{"name": name, "description": description_of(s)} for name, s in _entries(negatives)]
    if args.json:
        print(
            json.dumps(
                {
                    "tasks": found,
                    "families": tasks.family_names(),
                    "negatives": strategies,
                    "list_variants": list(lists.VARIANTS),
                }
            )
        )
        return
    rows = [[task["name"], task["description"], ", ".join(task["files"])] for task in found]
    print_table("tasks", ["name", "description", "files (under the data folder)"], rows)
    print(f"your own data as a task: {', '.join(tasks.family_names())} (README, 'A grid file')")
    print_table(
        "negative-sampling strategies", ["name", "description"], [list(s.values()) for s in strategies]
    )
    print(f"list variants: {', '.join(lists.VARIANTS)}")


def list_methods(args: argparse.Namespace) -> None:
    found = _cached(_method_records)
    if args.json:
        print(json.dumps(found))
        return
    rows = [
        [m["name"], m["description"], ", ".join(f"{k}={v}" for k, v in m["parameters"].items())]
        for m in found
    ]
    print_table("methods", ["name", "description", "parameters (defaults)"], rows)


def _method_records() -> list[dict[str, Any]]:
    from rankuq import methods

    return [
        {
            "name": name,
            "description": method.description,
            "parameters": {k: f.default for k, f in method.Params.model_fields.items()},
        }
        for name, method in _entries(methods)
    ]


def list_probes(args: argparse.Namespace) -> None:
    from rankuq.bench.probes import DEFAULT_PROBES, PROBES

    found = [
        {"name": name, "description": description_of(probe), "default": name in DEFAULT_PROBES}
        for name, probe in _entries(PROBES)
    ]
    if args.json:
        print(json.dumps(found))
        return
    rows = [[p["name"], p["description"], "yes" if p["default"] else "add to eval.probes"] for p in found]
    print_table("probes", ["name", "description", "by default"], rows)


def list_metrics(args: argparse.Namespace) -> None:
    from rankuq.bench.metrics import DEFAULT_METRICS, FAMILIES

    found = [
        {
            "name": name,
            "spelling": family.spelling,
            "pooled": family.pooled,
            "kind": family.kind,
            "better": family.better,
            "probe": family.probe,
            "description": family.description,
        }
        for name, family in _entries(FAMILIES)
    ]
    if args.json:
        print(json.dumps({"metrics": found, "default": list(DEFAULT_METRICS)}))
        return
    rows = [[m["spelling"], _value(m), f"{m['better']}", m["description"]] for m in found]
    print_table("metrics", ["name", "value", "better", "definition"], rows)
    print_note(f"by default: {', '.join(DEFAULT_METRICS)}; any other ir-measures name is delegated to it")


def _value(metric: Mapping[str, object]) -> str:
    """How a metric's value is taken: by a probe, pooled over candidate rows, or per query."""
    if metric["probe"]:
        return f"by the {metric['probe']} probe"
    return "pooled over candidates" if metric["pooled"] else "per query, averaged"


def _cached(rows: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The records kept in the user's cache while the methods' source files and the installed plugins
    stay as they were: listing them anew imports torch and every method (10 s on a busy machine)."""
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rankuq"
    path = folder / f"methods-{_methods_key()}.json"
    with contextlib.suppress(OSError, ValueError):
        return cast(list[dict[str, Any]], json.loads(path.read_text()))
    found = rows()
    with contextlib.suppress(OSError):  # no cache where none can be written
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("methods-*.json"):  # older code's
            stale.unlink()
        atomic_write(path, json.dumps(found, default=str))  # a default JSON cannot hold: its text
    found = json.loads(json.dumps(found, default=str))  # as read back from the cache
    return cast(list[dict[str, Any]], found)


def _methods_key() -> str:
    """rankuq's version, each file of rankuq.methods and of rankuq's own top level, where the
    methods' parameters come from (backbone, registry) (name, size, modification time), and each
    plugin's entry point and distribution version, hashed."""
    spec = importlib.util.find_spec("rankuq.methods")  # imports rankuq, not the methods
    folders = [*(spec.submodule_search_locations or [] if spec else []), *rankuq.__path__]
    files = sorted(path for folder in folders for path in Path(folder).glob("*.py"))
    plugins = entry_points(group="rankuq.methods")
    key = [
        CACHE_FORMAT,
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
