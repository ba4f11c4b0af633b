"""MkDocs hook: the tables of what a grid can name, read from the registries at build time.

A page asks for a table with a marker line, ``<!-- rankuq:table NAME -->``; the hook replaces it with
a Markdown table built from the registry the command ``rankuq tasks`` / ``rankuq methods`` list,
so the tables are never kept by hand. Names: see ``TABLES``. An unknown name fails the build.
Beside the registries: every key of a grid file with its default (from the grid schema, found by
its class name wherever it lives in rankuq/bench/), the built-in grids (rankuq/bench/grids/*.yaml) and
the layers
of rankuq/bench/ in the order tests/test_layers.py enforces.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import os
import re
import sys
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from importlib.metadata import entry_points
from importlib.util import find_spec
from pathlib import Path

import yaml
from docs_text import cell, escape
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from rankuq.registry import description_of, first_paragraph

ROOT = Path(__file__).resolve().parents[1]
GRID_SCHEMA = "GridSpec"  # the class of a validated grid file
LAYERS_TEST = ROOT / "tests" / "test_layers.py"  # where rankuq/bench/'s layers are stacked (BENCH_LAYERS)
MARKER = re.compile(r"^<!-- rankuq:table (\S+) -->$", re.MULTILINE)


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = [f"| {' | '.join(header)} |", f"| {' | '.join('---' for _ in header)} |"]
    lines += [f"| {' | '.join(cell(value) for value in row)} |" for row in rows]
    return "\n".join(lines)


def _code(name: str) -> str:
    return f"`{name}`"


def tasks() -> str:
    from rankuq import tasks as registry

    rows = [
        (_code(name), task.description, ", ".join(_code(f) for f in task.files))
        for name, task in ((name, registry.get(name)) for name in registry.names())
    ]
    families = ", ".join(_code(name) for name in registry.family_names())
    return (
        _table(["task", "what", "files (under the data folder)"], rows)
        + f"\n\nYour own data, as a task name: {cell(families)} (see the grid file reference)."
    )


def strategies() -> str:
    from rankuq.tasks import lists, negatives

    rows = [(_code(name), negatives.get(name).description) for name in negatives.names()]
    variants = ", ".join(_code(name) for name in lists.VARIANTS)
    return _table(["ns", "negatives"], rows) + f"\n\nList variants: {variants}."


def methods() -> str:
    from rankuq import methods as registry

    rows = []
    for name in registry.names():
        method = registry.get(name)
        fields = method.Params.model_fields
        params = ", ".join(f"`{key}={field.default}`" for key, field in fields.items()) or "—"
        rows.append((_code(name), method.description, params))
    return _table(["method", "what [paper]", "parameters (defaults)"], rows)


def methods_brief() -> str:
    from rankuq import methods as registry

    rows = [(_code(name), registry.get(name).description) for name in registry.names()]
    return _table(["method", "what [paper]"], rows)


def probes() -> str:
    from rankuq.bench.probes import DEFAULT_PROBES, PROBES

    rows = []
    for name in PROBES.names():
        default = "yes" if name in DEFAULT_PROBES else "add to `eval.probes`"
        rows.append((_code(name), description_of(PROBES.get(name)), default))
    return _table(["probe", "what it computes (and which paper it follows)", "by default"], rows)


def probe_details() -> str:
    """Each probe's whole module docstring under a heading of its name."""
    from rankuq.bench.probes import PROBES

    parts = []
    for name in PROBES.names():
        docstring = sys.modules[PROBES.get(name).__module__].__doc__ or ""
        parts += [f"### `{name}`", "", escape(inspect.cleandoc(docstring)), ""]
    return "\n".join(parts)


def metrics() -> str:
    from rankuq.bench.metrics import DEFAULT_METRICS, FAMILIES

    rows = [
        (
            _code(family.spelling),
            f"by the {family.probe} probe"
            if family.probe
            else "pooled over candidates"
            if family.pooled
            else "per query, averaged",
            family.better,
            family.description,
        )
        for family in (FAMILIES.get(name) for name in FAMILIES.names())
    ]
    defaults = ", ".join(_code(name) for name in DEFAULT_METRICS)
    return _table(["metric", "value", "better", "definition"], rows) + f"\n\nBy default: {defaults}."


def grids() -> str:
    rows = []
    folder = resources.files("rankuq.bench.grids")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        grid = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
        conditions = len(grid.get("tasks") or []) + len(grid.get("shifts") or [])
        seeds = grid.get("seeds") or [0]
        methods = ", ".join(_code(m) for m in grid.get("methods") or {})
        rows.append((f"`rankuq/bench/grids/{entry.name}`", conditions, methods, len(seeds)))
    return _table(["grid", "conditions", "methods", "seeds"], rows)


def _bench_folder() -> Path:
    spec = find_spec("rankuq.bench")
    assert spec is not None and spec.submodule_search_locations, "rankuq is not installed"
    return Path(next(iter(spec.submodule_search_locations)))


def _grid_schema() -> type:
    """The grid file's pydantic model, wherever rankuq/bench/ keeps it."""
    bench = _bench_folder()
    for path in sorted(bench.rglob("*.py")):
        if f"class {GRID_SCHEMA}(" in path.read_text(encoding="utf-8"):
            dotted = ".".join(["rankuq", "bench", *path.relative_to(bench).with_suffix("").parts])
            return getattr(importlib.import_module(dotted), GRID_SCHEMA)
    raise LookupError(f"no class {GRID_SCHEMA} under {bench}: the grid reference cannot be generated")


_BOUNDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "at least", "max_length": "at most"}


def _bounds(metadata: Iterable[object]) -> list[str]:
    out = []
    for item in metadata:
        for attribute, sign in _BOUNDS.items():
            value = getattr(item, attribute, None)
            if value is not None:
                out.append(f"{sign} {value:g}" if isinstance(value, float) else f"{sign} {value}")
    return out


def _type(annotation: object) -> str:
    """A field's type as a grid file's reader needs it (``int ≥ 1 or null``)."""
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin is typing.Annotated:
        extra = [m for a in args[1:] for m in (a.metadata if isinstance(a, FieldInfo) else [a])]
        return " ".join([_type(args[0]), *_bounds(extra)])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type(args[0])}"
    if origin is dict:
        return f"mapping of {_type(args[0])} to {_type(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section"
    if annotation is typing.Any:
        return "any"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: object) -> str:
    from pydantic import BaseModel

    if field.is_required():  # type: ignore[attr-defined]
        return "required"
    value = field.default  # type: ignore[attr-defined]
    if isinstance(value, BaseModel):
        return "(section)"
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True)
    return f"`{text.removesuffix(chr(10) + '...' + chr(10)).strip()}`"


def _sections(annotation: object) -> tuple[list[type], str]:
    """The sections (pydantic models) a field holds, and how their keys are written below it:
    ``key.`` for a section (or null), ``key[].`` for a list of them."""
    from pydantic import BaseModel

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    inner, suffix = (args, ".") if origin in (typing.Union, types.UnionType) else ((annotation,), ".")
    if origin is list:
        inner, suffix = args, "[]."
    return [a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)], suffix


def grid_keys() -> str:
    rows: list[tuple[object, ...]] = []

    def walk(model: type, prefix: str) -> None:
        for key, field in model.model_fields.items():  # type: ignore[attr-defined]
            sections, suffix = _sections(field.annotation)
            kind = _type(field.annotation)
            if sections and suffix == ".":
                kind = "section" + (" or null" if type(None) in typing.get_args(field.annotation) else "")
            elif sections:
                kind = "list of sections"
            kind = " ".join([kind, *_bounds(field.metadata)])
            rows.append((f"`{prefix}{key}`", kind, _default(field), field.description or ""))
            for section in sections:
                walk(section, f"{prefix}{key}{suffix}")

    walk(_grid_schema(), "")
    return _table(["key", "type", "default", "what"], rows)


def _docstring_summary(path: Path) -> str:
    return first_paragraph(ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))))


def layers() -> str:
    """rankuq/bench/'s subpackages and modules, lowest layer first, each with its docstring's summary."""
    tree = ast.parse(LAYERS_TEST.read_text(encoding="utf-8"))
    stack = next(
        (
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "BENCH_LAYERS" for t in node.targets)
        ),
        None,
    )
    if stack is None:
        raise LookupError(f"{LAYERS_TEST}: no BENCH_LAYERS, the layer table cannot be generated")
    bench = _bench_folder()
    rows = []
    for number, name in enumerate(stack, start=1):
        package, module = bench / name / "__init__.py", bench / f"{name}.py"
        path = package if package.is_file() else module
        where = f"`rankuq/bench/{name}/`" if package.is_file() else f"`rankuq/bench/{name}.py`"
        rows.append((number, where, _docstring_summary(path) if path.is_file() else "(not there)"))
    return _table(["layer", "in rankuq/bench/", "what it holds"], rows)


def _rankuq(*args: str) -> str:
    """What the installed ``rankuq`` command prints for ``args`` (its console-script entry point,
    called in this process at a fixed width)."""
    (command,) = entry_points(group="console_scripts", name="rankuq")
    out, argv, columns = io.StringIO(), sys.argv, os.environ.get("COLUMNS")
    sys.argv, os.environ["COLUMNS"] = ["rankuq", *args], "100"
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(out),
            contextlib.suppress(SystemExit),
        ):
            command.load()()
    finally:
        sys.argv = argv
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return out.getvalue().rstrip()


def cli() -> str:
    """Each command's ``--help``, in the order ``rankuq --help`` lists them."""
    usage = _rankuq("--help")
    found = re.search(r"\{([\w,-]+)\}", usage)
    if found is None:
        raise LookupError(f"`rankuq --help` lists no commands:\n{usage}")
    parts = []
    for command in found.group(1).split(","):
        parts += [f"## `rankuq {command}`", "", "```text", _rankuq(command, "--help"), "```", ""]
    return "\n".join(parts)


TABLES: dict[str, Callable[[], str]] = {
    "tasks": tasks,
    "strategies": strategies,
    "methods": methods,
    "methods_brief": methods_brief,
    "probes": probes,
    "probe_details": probe_details,
    "metrics": metrics,
    "grids": grids,
    "grid_keys": grid_keys,
    "layers": layers,
    "cli": cli,
}
_built: dict[str, str] = {}


def table(name: str) -> str:
    if name not in TABLES:
        raise ValueError(f"unknown table '{name}' in a docs page; valid tables: {', '.join(TABLES)}")
    if name not in _built:
        _built[name] = TABLES[name]()
    return _built[name]


def on_pre_build(config: MkDocsConfig) -> None:
    _built.clear()  # `mkdocs serve` rebuilds with the same hook: read everything afresh


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if "<!-- rankuq:table" not in markdown:
        return markdown
    return MARKER.sub(lambda match: table(match.group(1)), markdown)
