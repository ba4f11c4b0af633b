"""The non-editable wheel holds the whole library: every module of rankuq/ (its rooms rankuq/tasks/,
rankuq/methods/ and rankuq/bench/ included) as a real file, the grids' YAML files and the measurement
records (rankuq/records/*.json, which bench.planning.measured reads at import), but not the speed
benchmarks (rankuq/bench/benchmarks/: scripts run from a checkout) nor the raw measurements
(rankuq/records/data/); installed on its own, every module imports from the wheel's copy (not from
this checkout) and the command's entry point resolves.

The wheel is built from a copy of the sources (pyproject.toml, README.md and rankuq/), so the build
leaves no build/ folder or egg-info in the checkout; without build isolation (setuptools of the test
extra), so nothing is downloaded.
"""

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rankuq"
BENCHMARKS = PACKAGE / "bench" / "benchmarks"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")

# Run in the installed copy: import every module of the rankuq package found on disk (the wheel's
# tree, __main__ modules left out: they run), then the command's entry point; print where each came from.
IMPORT_ALL = """
import importlib, json, sys
from pathlib import Path
import rankuq
root = Path(rankuq.__file__).parent
names = sorted(
    ".".join(("rankuq", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
    for path in root.rglob("*.py")
    if path.name != "__main__.py"
)
for name in names:
    importlib.import_module(name)
from rankuq.bench.cli.main import cli, main
assert callable(cli) and callable(main)
mine = [(n, getattr(m, "__file__", None)) for n, m in sys.modules.items() if n.split(".")[0] == "rankuq"]
files = {n: f for n, f in mine if f}
print(json.dumps({"names": names, "files": files}))
"""


def source_files() -> dict[str, Path]:
    """Each module, grid and measurement record of the source tree → its path in the wheel (``rankuq/…``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*")):
        if "__pycache__" in path.parts or not path.is_file() or path.is_relative_to(BENCHMARKS):
            continue
        grid = path.suffix == ".yaml" and path.parent == PACKAGE / "bench" / "grids"
        # rankuq/records/*.json only: rankuq/records/data/ holds raw measurements the package never reads
        record = path.suffix == ".json" and path.parent == PACKAGE / "records"
        if path.suffix == ".py" or grid or record:
            found[path.relative_to(ROOT).as_posix()] = path
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the build runs in this environment (no build isolation): setuptools of the test extra
    if importlib.util.find_spec("setuptools") is None:
        pytest.fail("setuptools is not installed here: pip install -e '.[test]'", pytrace=False)
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(PACKAGE, source / "rankuq", symlinks=True, ignore=IGNORE)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", str(tmp / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stdout + build.stderr
    [built] = (tmp / "dist").glob("rankuq-*.whl")
    return built


def test_the_wheel_holds_every_module_and_grid_as_real_files(wheel: Path) -> None:
    expected = source_files()
    packages = {path.parent for path in expected.values() if path.suffix == ".py"}
    assert {PACKAGE / "bench" / "statistics", PACKAGE / "bench" / "grids"} <= packages
    assert all((folder / "__init__.py").is_file() for folder in packages), "a folder of modules is no package"
    with zipfile.ZipFile(wheel) as archive:
        entries = {info.filename: info for info in archive.infolist()}
        missing = sorted(set(expected) - set(entries))
        assert not missing, f"not in the wheel: {missing}"
        scripts = sorted(
            name for name in entries if name.startswith(("rankuq/bench/benchmarks/", "rankuq/records/data/"))
        )
        assert not scripts, f"benchmarks or raw measurements in the wheel: {scripts}"
        for name, path in expected.items():
            mode = entries[name].external_attr >> 16
            assert not stat.S_ISLNK(mode), f"{name} is a link in the wheel"
            assert archive.read(name) == path.read_bytes(), f"{name} differs from {path}"


def test_the_installed_wheel_imports_every_module_from_its_own_copy(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
         "-q", "--target", str(site), str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    # cwd outside the checkout and PYTHONPATH first: the wheel's rankuq shadows the editable install.
    path = os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "PYTHONPATH": path}
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.strip().splitlines()[-1])
    modules = {
        name.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        for name in source_files()
        if name.endswith(".py") and not name.endswith("__main__.py")
    }
    assert set(found["names"]) == modules
    assert {"rankuq", "rankuq.bench.statistics", "rankuq.bench.cli.main"} <= found["files"].keys()
    outside = {name: file for name, file in found["files"].items() if not Path(file).is_relative_to(site)}
    assert not outside, f"imported from outside the installed wheel: {outside}"
