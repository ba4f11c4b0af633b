"""MkDocs hook: the API reference, one page per module of the ``rankuq`` package.

Nothing here names a module. The package is found by walking its folder, ``rankuq/``, as griffe
(mkdocstrings' reader, ``paths: [.]`` in mkdocs.yml) resolves ``rankuq.bench.…`` from the
repository root. A new module gets its page and its
place in the navigation at the next build.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

from docs_text import cell
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from rankuq.registry import first_paragraph

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "rankuq"
FOLDER = "reference"  # the pages' folder in the site
NAV_TARGET = f"{FOLDER}/index.md"  # the nav entry in mkdocs.yml that the generated section replaces
# Scripts, not library code: the speed benchmarks run as `python -m` (docs/benchmarks.md has them).
SCRIPTS = ("benchmarks",)


def check_links(root: Path = ROOT) -> None:
    """Fail early, and say why, where ``rankuq/`` lacks one of its packages."""
    for folder in ("tasks", "methods", "bench"):
        if not (root / PACKAGE / folder / "__init__.py").is_file():
            raise FileNotFoundError(
                f"{root / PACKAGE / folder} is missing: the API reference reads rankuq.{folder} there "
                f"(restore it: git checkout -- rankuq/{folder})"
            )


def modules(package_root: Path) -> list[tuple[str, Path]]:
    """(dotted name, file) of every public module under ``package_root``, packages before their
    modules, in name order."""
    found = []
    for folder, subfolders, files in os.walk(package_root):
        subfolders[:] = sorted(
            d for d in subfolders if d not in SCRIPTS and (Path(folder) / d / "__init__.py").is_file()
        )
        base = Path(folder).relative_to(package_root.parent).parts
        for name in sorted(files):
            if not name.endswith(".py") or (name.startswith("_") and name != "__init__.py"):
                continue
            parts = base if name == "__init__.py" else (*base, name[:-3])
            found.append((".".join(parts), Path(folder) / name))
    return sorted(found, key=lambda item: item[0].split("."))


def summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line ('' without one)."""
    return first_paragraph(ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))))


def page_path(dotted: str, is_package: bool) -> str:
    parts = dotted.split(".")
    return "/".join([FOLDER, *parts, "index.md"] if is_package else [FOLDER, *parts[:-1], f"{parts[-1]}.md"])


class Reference:
    """The pages and the navigation of one build."""

    def __init__(self, root: Path = ROOT) -> None:
        self.modules = [
            (dotted, path, path.name == "__init__.py") for dotted, path in modules(root / PACKAGE)
        ]

    def pages(self) -> dict[str, str]:
        """Site path → Markdown of every page, the overview included."""
        pages = {page_path(dotted, is_package): f"::: {dotted}\n" for dotted, _, is_package in self.modules}
        rows = [
            f"| [`{dotted}`]({Path(page_path(dotted, is_package)).relative_to(FOLDER).as_posix()}) "
            f"| {cell(summary(path))} |"
            for dotted, path, is_package in self.modules
        ]
        pages[NAV_TARGET] = "\n".join(
            [
                "# API reference",
                "",
                "Every module of the installed package, generated from the docstrings at each build "
                "(`docs_hooks/reference.py` walks the package folders: a new module appears here by "
                "itself): `rankuq/` → `rankuq`, `rankuq/tasks/` → `rankuq.tasks`, `rankuq/methods/` → "
                "`rankuq.methods`, `rankuq/bench/` → `rankuq.bench`.",
                "",
                "| module | what it holds |",
                "| --- | --- |",
                *rows,
                "",
            ]
        )
        return pages

    def nav(self) -> list[Any]:
        """The reference section: the overview, then the package tree (a package's page first)."""
        tree: dict[str, Any] = {}
        for dotted, _, is_package in self.modules:
            node = tree
            for part in dotted.split(".")[:-1]:
                node = node.setdefault(part, {})
            leaf = dotted.split(".")[-1]
            if is_package:
                node.setdefault(leaf, {})[""] = page_path(dotted, True)
            else:
                node[leaf] = page_path(dotted, False)

        def entries(node: dict[str, Any]) -> list[Any]:
            out: list[Any] = [node[""]] if "" in node else []
            for name, child in node.items():
                if name:
                    out.append({name: entries(child) if isinstance(child, dict) else child})
            return out

        return [NAV_TARGET, *entries(tree)]


_reference: Reference | None = None


def _replace_target(nav: list[Any], section: list[Any]) -> bool:
    for index, item in enumerate(nav):
        if isinstance(item, dict):
            for title, value in item.items():
                if value == NAV_TARGET:
                    item[title] = section
                    return True
                if isinstance(value, list) and _replace_target(value, section):
                    return True
        elif item == NAV_TARGET:
            nav[index] = {"API reference": section}
            return True
    return False


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    global _reference
    check_links()
    _reference = Reference()
    if config.nav is not None and not _replace_target(config.nav, _reference.nav()):
        raise ValueError(f"mkdocs.yml: nav has no entry '{NAV_TARGET}' for the API reference to replace")
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    assert _reference is not None
    for src_uri, content in _reference.pages().items():
        files.append(File.generated(config, src_uri, content=content))
    return files
