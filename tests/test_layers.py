"""Layers look down only.

Between the package's rooms: rankuq/'s own modules (the base layer) import none of its three
subpackages, rankuq/tasks/ and rankuq/methods/ import neither each other nor rankuq/bench/. Inside
rankuq/bench/, its subpackages are stacked in
``BENCH_LAYERS`` (lowest first): a module imports only from its own subpackage or one below it, so
the pipeline reads bottom-up and no import cycle can hide inside a function. The speed benchmarks
(``rankuq/bench/benchmarks``) are scripts on top of everything; nothing in the library imports them.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rankuq"
SUBPACKAGES = ("tasks", "methods", "bench")  # real folders under rankuq/, beside the base modules
FORBIDDEN = {
    "rankuq": ("rankuq.tasks", "rankuq.methods", "rankuq.bench"),
    "tasks": ("rankuq.methods", "rankuq.bench"),
    "methods": ("rankuq.tasks", "rankuq.bench"),
}
# The one upward reference allowed: the package root re-exports the notebook API (``rankuq.run_grid``
# & co.), declared as a TYPE_CHECKING import and resolved lazily (see rankuq/__init__.py's comment).
REEXPORTS = {"rankuq/__init__.py": "rankuq.bench.api"}
BENCH_LAYERS = (
    "rundir",  # where a run's files lie, the lock
    "predictions",  # contract 2: the predictions table
    "metrics",  # effectiveness and calibration measures
    "statistics",  # per-query parts, paired tests, corrections, the bootstrap and the verdicts' tests
    "plots",  # the PNG plots a run logs
    "probes",  # the evaluation probes over scored lists
    "preflight",  # a command's input checks, made before the slow imports
    "config",  # the grid schema, training settings, search spaces
    "evaluation",  # the probes' cache, paired tests, TREC files, black-box evaluation
    "planning",  # content keys, typed jobs, the plan, the capacity estimate
    "engine",  # Ray: session, processes, training, members, scoring, post-hoc fits, searches
    "results",  # leaderboard, MLflow, the HTML report, provenance
    "run",  # the stages and the one function that runs a grid
    "findings",  # the papers' claims judged on finished runs
    "api",  # the Python API
    "cli",  # the command, one module per verb
    "benchmarks",  # speed benchmarks: scripts, imported by nothing in the library
)


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports: import statements (in functions and under TYPE_CHECKING too)
    and ``import_module`` calls given a literal name or a module-level constant holding one."""
    tree = ast.parse(path.read_text(), str(path))
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Call) and _called(node.func) == "import_module" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.add(first.value)
            elif isinstance(first, ast.Name) and first.id in constants:
                names.add(constants[first.id])
    return names


def _called(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def upward(folder: Path, top: str) -> set[str]:
    """The imports of the files under ``folder`` (the layer ``top``: rankuq/'s base modules, or one of
    its subpackages) of a package it may not import, less the declared re-export of its file."""
    wrong = set()
    for path in sorted(folder.glob("**/*.py")):
        if top == "rankuq" and path.relative_to(folder).parts[0] in SUBPACKAGES:
            continue  # the base layer is rankuq/'s own modules
        allowed = REEXPORTS.get(str(path.relative_to(folder.parent)))
        for name in imported(path):
            reexported = allowed is not None and (name == allowed or name.startswith(f"{allowed}."))
            if name.startswith(FORBIDDEN[top]) and not reexported:
                wrong.add(f"{path.relative_to(folder.parent)}: {name}")
    return wrong


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(folder):
    where = PACKAGE if folder == "rankuq" else PACKAGE / folder
    assert list(where.glob("**/*.py"))
    assert not upward(where, folder)


def test_the_package_root_s_reexport_is_seen_and_nothing_else_upward_is_allowed(tmp_path):
    """The root's lazy API is an import the rule sees (the one it allows); an import_module of a
    higher package anywhere else in rankuq/, by a literal or a constant, is found."""
    assert "rankuq.bench.api" in imported(ROOT / "rankuq" / "__init__.py")
    base = tmp_path / "rankuq"
    base.mkdir()
    (base / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rankuq.bench.api import run_grid\n"
        "def f():\n    import importlib\n    return importlib.import_module('rankuq.bench.cli')\n"
    )
    (base / "hidden.py").write_text("WHERE = 'rankuq.tasks'\ndef g():\n    return import_module(WHERE)\n")
    assert upward(base, "rankuq") == {
        "rankuq/__init__.py: rankuq.bench.cli",
        "rankuq/hidden.py: rankuq.tasks",
    }


def upward_imports(bench: Path) -> set[str]:
    """Each import in the rankuq/bench/ folder ``bench`` of a subpackage above the importing module's own."""
    wrong = set()
    for path in sorted(bench.glob("**/*.py")):
        top = path.relative_to(bench).parts[0].removesuffix(".py")
        if top in ("__init__", "grids"):  # grids: data, no imports
            continue
        layer = BENCH_LAYERS.index(top)
        for name in imported(path):
            parts = name.split(".")
            above = parts[2:3] and parts[2] in BENCH_LAYERS and BENCH_LAYERS.index(parts[2]) > layer
            if parts[:2] == ["rankuq", "bench"] and above:
                wrong.add(f"{path.relative_to(bench)}: {name}")
    return wrong


def test_bench_is_made_of_the_listed_layers_only():
    entries = {path.name.removesuffix(".py") for path in (PACKAGE / "bench").iterdir()}
    assert entries - {"__init__", "__pycache__", "grids"} == set(BENCH_LAYERS)


def test_a_bench_subpackage_imports_only_its_own_layer_and_those_below():
    assert not upward_imports(PACKAGE / "bench")


def test_the_layer_rule_finds_an_upward_import(tmp_path):
    bad = tmp_path / "planning" / "bad.py"
    bad.parent.mkdir()
    bad.write_text("def f():\n    from rankuq.bench.engine.members import train_members\n")
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "fine.py").write_text("from rankuq.bench.planning.plan import plan\n")
    assert upward_imports(tmp_path) == {
        "planning/bad.py: rankuq.bench.engine.members",
        "planning/bad.py: rankuq.bench.engine.members.train_members",
    }


def test_the_packages_are_real_folders_under_rankuq_and_the_benchmarks_stay_out_of_the_wheel():
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setup["packages"]["find"]["include"] == ["rankuq", "rankuq.*"]
    assert setup["packages"]["find"]["exclude"] == ["rankuq.bench.benchmarks", "rankuq.bench.benchmarks.*"]
    links = [path for path in PACKAGE.rglob("*") if path.is_symlink()]
    assert not links, f"links under rankuq/: {links}"
    for package in (*SUBPACKAGES, "records"):
        assert (PACKAGE / package).is_dir() and not (ROOT / package).exists()


# A module's underscore names are its own: what another module needs is public, so a rename inside one
# module never breaks another silently. Nothing is allowed across modules today.
PRIVATE_IMPORTS_ALLOWED: dict[str, str] = {}  # "file: module.name" → why it must stay private


def library_files(root: Path) -> list[Path]:
    """Every module of the package under ``root`` (``root``/rankuq/)."""
    return sorted((root / "rankuq").glob("**/*.py"))


def private_imports(root: Path) -> set[str]:
    """Each ``from rankuq.… import _name`` (and ``import rankuq._mod``) in the package's folders under
    ``root``, less the allowed ones."""
    wrong = set()
    for path in library_files(root):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rankuq"):
                names = [f"{node.module}.{alias.name}" for alias in node.names if _private(alias.name)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names if alias.name.startswith("rankuq")]
                names = [name for name in names if any(map(_private, name.split(".")))]
            else:
                continue
            wrong |= {f"{path.relative_to(root)}: {name}" for name in names}
    return wrong - PRIVATE_IMPORTS_ALLOWED.keys()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_module_s_private_name():
    assert not private_imports(ROOT)


def test_the_private_import_rule_finds_one(tmp_path):
    for top in ("rankuq/tasks", "rankuq/bench/cli"):
        (tmp_path / top).mkdir(parents=True)
    (tmp_path / "rankuq" / "bench" / "cli" / "main.py").write_text(
        "from rankuq.bench.cli.run import _run, run_command\nimport rankuq.bench._hidden\n"
        "from rankuq import __version__\n"
    )
    (tmp_path / "rankuq" / "tasks" / "own.py").write_text("def _mine():\n    return 1\nVALUE = _mine()\n")
    assert private_imports(tmp_path) == {
        "rankuq/bench/cli/main.py: rankuq.bench.cli.run._run",
        "rankuq/bench/cli/main.py: rankuq.bench._hidden",
    }


def module_name(path: Path) -> str:
    """The module a file of the package is, as Python imports it."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of the library it imports (in functions and under TYPE_CHECKING too):
    ``from a import b`` reaches the module a.b where there is one, else a itself."""
    modules = {module_name(path): path for path in library_files(ROOT)}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = [f"{node.module}.{alias.name}" for alias in node.names]
                targets |= {f if f in modules else node.module for f in found}
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def test_the_library_s_imports_have_no_circle():
    """Issue 49: findings' runs → preconditions → sides → runs was a circle the layer rule (between
    subpackages) could not see. graphlib names one circle where there is any."""
    import graphlib

    graph = import_graph()
    assert len(graph) > 150 and "rankuq.bench.findings.runs" in graph
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError with the circle's modules
