"""The dated measurements rankuq's code reads its constants from: one JSON record a file in rankuq/records/.

A record says when (``date``), where (``machine``: host, CPU, GPU), at which ``commit``, with which
``command`` and under which ``load_average`` its ``figures`` were measured (``about``: what and how);
each figure is ``{"value", "unit", "what"}``. A record of data-sheet figures and assumptions has no
machine or command. The records travel with the package (package data of the wheel) and the docs site
renders them into its Measurements page
(docs_hooks/measurements.py).
"""

import json
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

RECORDS = Path(__file__).resolve().parent / "records"
KEYS = ("title", "date", "machine", "commit", "command", "load_average", "about", "figures")


class Figure(TypedDict):
    value: float
    unit: str
    what: str


@cache
def record(name: str) -> dict[str, Any]:
    """The record ``rankuq/records/<name>.json``, its keys checked."""
    path = RECORDS / f"{name}.json"
    if not path.is_file():
        known = ", ".join(sorted(found.stem for found in RECORDS.glob("*.json")))
        raise FileNotFoundError(f"{path}: no such measurement record; the records: {known}")
    found = json.loads(path.read_text())
    missing = [key for key in KEYS if key not in found]
    if missing:
        raise ValueError(f"{path}: missing {', '.join(missing)}; every record has {', '.join(KEYS)}")
    return dict(found)


def names() -> list[str]:
    """Every record's name: the measurements newest first, then the records of assumptions."""
    found = [path.stem for path in RECORDS.glob("*.json")]
    return sorted(found, key=lambda name: (record(name)["machine"] is not None, record(name)["date"]))[::-1]


def figure(name: str, key: str) -> float:
    """The value of figure ``key`` of record ``name``."""
    return float(_figure(name, key)["value"])


def source(name: str, key: str) -> str:
    """Where figure ``key`` of record ``name`` comes from, in one line: what, record, machine, date."""
    found, measured = _figure(name, key), record(name)
    machine = measured["machine"]
    where = ", ".join(filter(None, (machine["cpu"], machine["gpu"]))) if machine else "not measured"
    path = f"rankuq/records/{name}.json"
    return f"{found['what']} ({path}: {where}, {measured['date']}, at {measured['commit']})"


def _figure(name: str, key: str) -> Figure:
    figures: dict[str, Figure] = record(name)["figures"]
    if key not in figures:
        raise KeyError(f"rankuq/records/{name}.json has no figure {key!r}; its figures: {', '.join(figures)}")
    return figures[key]
