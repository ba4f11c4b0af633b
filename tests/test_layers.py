"""Layers look down only.

Between the top folders: the base layer ``rankuq/`` imports none of the three packages, tasks/ and
methods/ import neither each other nor bench/. Inside bench/, its subpackages are stacked in
``BENCH_LAYERS`` (lowest first): a module imports only from its own subpackage or one below it, so
the pipeline reads bottom-up and no import cycle can hide inside a function. The speed benchmarks
(``bench/benchmarks``) are scripts on top of everything; nothing in the library imports them.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "rankuq": ("rankuq.tasks", "rankuq.methods", "rankuq.bench"),
    "tasks": ("rankuq.methods", "rankuq.bench"),
    "methods": ("rankuq.tasks", "rankuq.bench"),
}
BENCH_LAYERS = (
    "rundir",  # where a run's files lie, atomic writes, the lock
    "predictions",  # contract 2: the predictions table
    "metrics",  # effectiveness and calibration measures
    "plots",  # the PNG plots a run logs
    "probes",  # the evaluation probes over scored lists
    "preflight",  # a command's input checks, made before the slow imports
    "config",  # the grid schema, training settings, search spaces
    "evaluation",  # the probes' cache, paired tests, TREC files, black-box evaluation
    "planning",  # content keys, typed jobs, the plan, the capacity estimate
    "engine",  # Ray: session, processes, training, members, scoring, post-hoc fits, searches
    "results",  # leaderboard, MLflow, the HTML report, provenance
    "run",  # the stages and the runner
    "findings",  # the papers' claims judged on finished runs
    "api",  # the Python API
    "cli",  # the command, one module per verb
    "benchmarks",  # speed benchmarks: scripts, imported by nothing in the library
)


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(folder):
    files = sorted((ROOT / folder).glob("**/*.py"))  # rankuq/'s links to the packages are not followed
    assert files
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in imported(path)
        if name.startswith(FORBIDDEN[folder])
    }
    assert not wrong


def upward_imports(bench: Path) -> set[str]:
    """Each import in the bench/ folder ``bench`` of a subpackage above the importing module's own."""
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
    entries = {path.name.removesuffix(".py") for path in (ROOT / "bench").iterdir()}
    assert entries - {"__init__", "__pycache__", "grids"} == set(BENCH_LAYERS)


def test_a_bench_subpackage_imports_only_its_own_layer_and_those_below():
    assert not upward_imports(ROOT / "bench")


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


def test_the_distribution_finds_its_packages_through_the_links():
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setup["packages"]["find"]["include"] == ["rankuq", "rankuq.*"]
    for package in ("tasks", "methods", "bench"):
        link = ROOT / "rankuq" / package
        assert link.is_symlink() and link.resolve() == (ROOT / package).resolve()
