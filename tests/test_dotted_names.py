"""Every dotted name the documentation gives (``bench.…``, ``rankuq.…`` in docs/, README.md and
pyproject.toml) resolves: a module that imports, or an attribute of one. ``bench.x`` is read as
``rankuq.bench.x``. A few such names are not Python names (MLflow tags, entry-point groups): each is
listed with what it is, and must still be a string the package itself uses."""

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md", ROOT / "pyproject.toml"]
# A dotted name not inside a path or a longer name ("rankuq/bench/grids/x.yaml", "rankuq-bench.x" are not).
NAME = re.compile(r"(?<![\w./-])((?:rankuq|bench)(?:\.[A-Za-z_]\w*)+)")
NOT_PYTHON = {
    "rankuq.baseline": "an MLflow tag of a grid run",
    "rankuq.level": "an MLflow tag: grid, cell, seed or search",
    "rankuq.notes": "an MLflow tag",
    "rankuq.probes": "the entry-point group of probe plugins",
}


def resolves(name: str) -> bool:
    parts = (name if name.startswith("rankuq.") else f"rankuq.{name}").split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def test_every_dotted_name_in_the_docs_resolves():
    named = {
        (match.group(1), path.relative_to(ROOT).as_posix())
        for path in SOURCES
        for match in NAME.finditer(path.read_text())
    }
    assert len(named) > 50  # the pattern finds the names the pages give (79 when written)
    stale = sorted(
        f"{where}: {name}" for name, where in named if name not in NOT_PYTHON and not resolves(name)
    )
    assert not stale, "names that no longer import; point them at their module or attribute: " + str(stale)


def test_the_names_that_are_not_python_are_still_used_by_the_package():
    code = "\n".join(path.read_text() for path in (ROOT / "rankuq" / "bench").rglob("*.py"))
    unused = [name for name in NOT_PYTHON if f'"{name}' not in code]
    assert not unused, f"no longer a string of rankuq/bench/: {unused}; drop them from NOT_PYTHON"


def test_a_stale_name_is_found():
    assert resolves("bench.engine.scoring.batch_segments") and resolves("rankuq.bench.planning")
    assert not resolves("bench.engine.batch_segments") and not resolves("bench.stages.Cluster")
