"""The documentation site: `mkdocs build --strict` passes (no warning: every link, anchor and
cross-reference resolves), its home page renders in headless Chromium with the generated tables, every
library module has an API page, and the README's hand-written tables name every registered task,
method and probe."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL = "apt-get update && apt-get install -y --no-install-recommends chromium"
QUIET = {"DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"}  # the plugins' banners


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, **QUIET},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, f"mkdocs build --strict failed (pip install -e '.[docs]'):\n{build.stderr}"
    return out


def dump_dom(page: Path, profile: Path) -> str:
    """The page's DOM after its scripts ran, from headless Chromium with no network use of its own."""
    binary = shutil.which("chromium")
    if binary is None:
        pytest.fail(f"chromium is not installed: run `{INSTALL}` (with sudo if not root)", pytrace=False)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]
    run = subprocess.run(
        [binary, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True
    )
    return run.stdout


def text_of(dom: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", dom).split())


def test_the_home_page_renders_with_the_generated_methods_table(site, tmp_path):
    dom = dump_dom(site / "index.html", tmp_path / "chromium")
    assert "<title>rankuq</title>" in dom
    text = text_of(dom)
    assert "A benchmark harness for the calibration and uncertainty of neural rerankers" in text
    # A row of the methods table, generated from the registry at build time.
    assert "mc_dropout MC Dropout: dropout on at test time, T stochastic passes" in text
    assert "Getting started" in text and "API reference" in text  # the navigation


def test_every_library_module_has_an_api_page(site):
    missing = []
    for top in ("rankuq", "tasks", "methods", "bench"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT / top).with_suffix("").parts
            if "benchmarks" in parts or (parts[-1].startswith("_") and parts[-1] != "__init__"):
                continue
            dotted = ["rankuq"] + ([] if top == "rankuq" else [top]) + list(parts)
            if dotted[-1] == "__init__":
                dotted.pop()
            if not (site / "reference" / Path(*dotted) / "index.html").is_file():
                missing.append(".".join(dotted))
    assert not missing


def test_the_readme_names_every_registered_task_method_and_probe():
    from rankuq import methods, tasks
    from rankuq.bench.probes import PROBES

    readme = (ROOT / "README.md").read_text()
    names = [*tasks.names(), *methods.names(), *PROBES.names()]
    assert [name for name in names if f"`{name}`" not in readme] == []
    assert len(readme.splitlines()) <= 250
