"""Names that mean one thing (docs/architecture.md, "Names that mean one thing"): "run" alone is a
grid run, so no module of the library defines a function, class or method named bare ``run`` or
``Run``; a TREC run is a ``trec_run``, an MLflow run an ``mlflow_run``, a probe applied ``probe``. The
speed benchmarks (scripts, rankuq/bench/benchmarks/) are left out."""

import ast
from pathlib import Path

from .test_layers import library_files

ROOT = Path(__file__).resolve().parents[1]
AMBIGUOUS = {"run", "Run"}


def ambiguous_definitions(root: Path) -> set[str]:
    """``file: name`` for each function or class named bare ``run``/``Run`` under the package folders."""
    found = set()
    for path in library_files(root):
        if "benchmarks" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name in AMBIGUOUS
            ):
                found.add(f"{path.relative_to(root)}: {node.name}")
    return found


def test_no_module_of_the_library_defines_a_bare_run():
    assert not ambiguous_definitions(ROOT)


def test_the_rule_finds_a_bare_run(tmp_path):
    for top in ("rankuq/tasks", "rankuq/bench/probes", "rankuq/bench/benchmarks"):
        (tmp_path / top).mkdir(parents=True)
    (tmp_path / "rankuq" / "bench" / "probes" / "mine.py").write_text("def run(table):\n    return table\n")
    (tmp_path / "rankuq" / "tasks" / "own.py").write_text(
        "class Run:\n    pass\n\n\ndef trec_run():\n    pass\n"
    )
    (tmp_path / "rankuq" / "bench" / "benchmarks" / "speed.py").write_text("def run():\n    pass\n")
    assert ambiguous_definitions(tmp_path) == {"rankuq/bench/probes/mine.py: run", "rankuq/tasks/own.py: Run"}
