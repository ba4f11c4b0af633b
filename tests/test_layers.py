"""Layers look down only: the base layer ``rankuq/`` imports none of the three packages, tasks/ and
methods/ import neither each other nor bench/ (bench/ may import everything)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "rankuq": ("rankuq.tasks", "rankuq.methods", "rankuq.bench"),
    "tasks": ("rankuq.methods", "rankuq.bench"),
    "methods": ("rankuq.tasks", "rankuq.bench"),
}


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
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in imported(path)
        if name.startswith(FORBIDDEN[folder])
    }
    assert not wrong


def test_the_distribution_claims_only_the_name_rankuq():
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert {package.split(".")[0] for package in setup["packages"]} == {"rankuq"}
    assert setup["package-dir"] == {
        "rankuq": "rankuq",
        "rankuq.tasks": "tasks",
        "rankuq.methods": "methods",
        "rankuq.bench": "bench",
    }
