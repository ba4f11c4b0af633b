"""Every third-party module the package imports is a declared dependency of pyproject.toml."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("rankuq",)
# Developer tools: the benchmarks may compare against packages of the test extra (ir-measures).
TOOLS = REPO / "rankuq" / "bench" / "benchmarks"


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str]) -> set[str]:
    """Distribution names of PEP 508 requirement strings (``ray[tune]>=2.50`` → ``ray``)."""
    return {normalise(re.findall(r"[A-Za-z0-9._-]+", text.strip())[0]) for text in requirements}


def imported_modules() -> dict[str, set[Path]]:
    """Top-level third-party module → the package files that import it (any import, lazy ones too)."""
    modules: dict[str, set[Path]] = {}
    for folder in FOLDERS:
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top != "rankuq" and top not in sys.stdlib_module_names:
                        modules.setdefault(top, set()).add(path)
    return modules


@pytest.fixture(scope="module")
def declared() -> dict[str, set[str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    groups = {"": requirement_names(project["dependencies"])}
    groups |= {extra: requirement_names(reqs) for extra, reqs in project["optional-dependencies"].items()}
    return groups


def test_the_walk_finds_the_package_imports() -> None:
    modules = imported_modules()
    assert {"torch", "transformers", "ray", "sklearn", "scipy", "faiss"} <= modules.keys()
    assert not {"os", "rankuq", "json"} & modules.keys()


def test_every_imported_module_is_declared(declared: dict[str, set[str]]) -> None:
    """Outside the benchmarks: in the dependencies or an extra meant for users (not ``test``)."""
    installed = packages_distributions()
    for_users = set().union(*(names for extra, names in declared.items() if extra != "test"))
    everything = set().union(*declared.values())
    undeclared = []
    for module, paths in sorted(imported_modules().items()):
        distributions = {normalise(name) for name in installed.get(module, [module])}
        tool_only = all(path.is_relative_to(TOOLS) for path in paths)
        if not distributions & (everything if tool_only else for_users):
            where = sorted(str(path.relative_to(REPO)) for path in paths)[0]
            undeclared.append(f"{module} (from {where}; distribution {sorted(distributions)})")
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def test_torch_is_a_floor() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    [torch] = [text for text in project["dependencies"] if normalise(text).startswith("torch")]
    assert re.fullmatch(r"torch>=[\d.]+", torch.replace(" ", "")), torch
