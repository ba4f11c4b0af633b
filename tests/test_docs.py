"""The documentation site: `mkdocs build --strict` passes (no warning: every link, anchor and
cross-reference resolves), its home page renders in headless Chromium with the generated tables, every
library module has an API page, and the README's hand-written tables name every registered task,
method and probe."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .browser import chromium, text_of

ROOT = Path(__file__).resolve().parents[1]
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
    """The page's DOM after its scripts ran."""
    return chromium("--dump-dom", page.as_uri(), profile=profile)


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


def test_the_measurements_page_is_generated_from_every_record(site):
    """Each record of rankuq/records/ is a section of the Measurements page, anchored by its name, with its
    commit and figures; the benchmarks page links a benchmark's records; no page of the site is the
    lab notebook (rankuq/records/notebook.md stays out of the site)."""
    from rankuq.measurements import names, record

    page = (site / "measurements" / "index.html").read_text()
    for name in names():
        found = record(name)
        assert f'id="{name}"' in page and found["commit"] in page, name
        assert all(f"<code>{key}</code>" in page for key in found["figures"]), name
    benchmarks = (site / "benchmarks" / "index.html").read_text()
    assert 'href="../measurements/#2026-11-21-method-cost-cpu"' in benchmarks
    assert not (site / "notebook").exists() and "notebook.md" not in (ROOT / "mkdocs.yml").read_text()


# A date in a page's prose (not in a link's anchor or a file's name): a measurement belongs in rankuq/records/
DATED_PROSE = re.compile(r"(?<![#/\-\w])20\d\d-\d\d-\d\d")


def test_no_page_of_the_site_or_the_readme_holds_dated_prose():
    """Dated figures are records (rankuq/records/, rendered into the Measurements page); a page links them by
    anchor (``measurements.md#2026-11-27-h100-stages``) or names a dated file, and dates nothing itself."""
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
    dated = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in pages
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if DATED_PROSE.search(line)
    ]
    assert not dated, "dated prose (make it a record in rankuq/records/ and link it):\n" + "\n".join(dated)
    assert DATED_PROSE.search("(measured 2026-11-26: bundle 47.6 MiB)")  # the pattern sees prose dates
    linked = "[x](measurements.md#2026-11-27-h100-stages), rankuq/records/data/2026-11-27-h100/gpu.json"
    assert not DATED_PROSE.search(linked)


def test_the_readme_names_every_registered_task_method_and_probe():
    from rankuq import methods, tasks
    from rankuq.bench.probes import PROBES

    readme = (ROOT / "README.md").read_text()
    names = [*tasks.names(), *methods.names(), *PROBES.names()]
    assert [name for name in names if f"`{name}`" not in readme] == []
    assert len(readme.splitlines()) <= 250
