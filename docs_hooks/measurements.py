"""MkDocs hook: the Measurements page and the list of benchmarks, generated.

``<!-- rankuq:measurements -->`` becomes every record of rankuq/records/ (``rankuq.measurements``), newest
first: when, on which machine, at which commit, with which command and load, and its figures; each
record's heading is anchored by its name (``measurements.md#<name>``). ``<!-- rankuq:benchmarks -->``
becomes one row per speed benchmark of ``rankuq/bench/benchmarks``: its command, the first paragraph of its
docstring, and the records whose command names it. Nothing of either is written by hand.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from docs_text import cell, escape
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from rankuq.registry import first_paragraph

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "rankuq" / "bench" / "benchmarks"
MARKER = re.compile(r"^<!-- rankuq:(measurements|benchmarks) -->$", re.MULTILINE)
PAGE = "measurements.md"


def _number(value: float) -> str:
    return f"{value:,.6g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2g}"


def measurements() -> str:
    from rankuq.measurements import names, record

    parts = []
    for name in names():
        found = record(name)
        machine = found["machine"]
        where = "; ".join(filter(None, (machine["host"], machine["cpu"], machine["gpu"]))) if machine else "—"
        facts = [
            ("date", found["date"]),
            ("machine", where),
            ("commit", f"`{found['commit']}`"),
            ("command", f"`{found['command']}`" if found["command"] else "—"),
            ("load average", found["load_average"] if found["load_average"] is not None else "not recorded"),
            ("record", f"`rankuq/records/{name}.json`"),
        ]
        rows = [
            f"| `{key}` | {_number(figure['value'])} | {cell(figure['unit'])} | {cell(figure['what'])} |"
            for key, figure in found["figures"].items()
        ]
        parts += [
            f"## {escape(found['title'])} {{#{name}}}",
            "",
            escape(found["about"]),
            "",
            *(f"- **{key}**: {value if key == 'command' else escape(str(value))}" for key, value in facts),
            "",
            "| figure | value | unit | what |",
            "| --- | --- | --- | --- |",
            *rows,
            "",
        ]
    return "\n".join(parts)


def benchmarks() -> str:
    from rankuq.measurements import names, record

    rows = []
    for path in sorted(BENCHMARKS.iterdir()):
        source = path / "__init__.py" if path.is_dir() else path
        if path.name.startswith("_") or not source.is_file() or source.suffix != ".py":
            continue
        module = f"rankuq.bench.benchmarks.{path.stem}"
        docstring = ast.get_docstring(ast.parse(source.read_text()))
        measured = [name for name in names() if module in (record(name)["command"] or "")]
        links = ", ".join(f"[{record(name)['date']}]({PAGE}#{name})" for name in measured) or "—"
        rows.append(f"| `python -m {module}` | {cell(first_paragraph(docstring))} | {links} |")
    return "\n".join(["| command | what it measures | records |", "| --- | --- | --- |", *rows])


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if "<!-- rankuq:" not in markdown:
        return markdown
    pages = {"measurements": measurements, "benchmarks": benchmarks}
    return MARKER.sub(lambda match: pages[match.group(1)](), markdown)
