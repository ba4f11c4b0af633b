"""Fixtures of the findings tests: a run held in memory whose (condition, method, metric) has one
mean-type parts table per seed, seeded noisy per-query values, and a claim about ECE. (Tests import
nothing from here.)"""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.findings.claims import Claim, Paper
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.statistics.parts import QueryParts

SPEC, _ = parse_grid(
    {
        "name": "g",
        "tasks": ["wikiqa"],
        "methods": {"bm25": {}, "bert": {}, "ensemble": {}},
        "baseline": "bert",
    },
    "test grid",
)
QIDS = np.array([f"q{i}" for i in range(200)])


class Records:
    """Per-query records in memory: (condition, method, metric) → seed → parts."""

    def __init__(self, parts: dict[tuple[str, str, str], dict[int, QueryParts]]) -> None:
        self._parts = parts

    def parts(self, condition: str, method: str, metric: str) -> dict[int, QueryParts]:
        return self._parts.get((condition, method, metric), {})

    def queries(self) -> dict[str, int]:
        found: dict[str, set[str]] = {}
        for (condition, _, _), seeds in self._parts.items():
            found.setdefault(condition, set()).update(q for parts in seeds.values() for q in parts.qids)
        return {condition: len(qids) for condition, qids in found.items()}


def values(mean: float, noise: float, seed: int) -> np.ndarray:
    return mean + noise * np.random.default_rng(seed).standard_normal(QIDS.size)


def run_of(columns: dict[tuple[str, str, str], list[np.ndarray]], kinds=None, seeds=None) -> FinishedRun:
    """A run whose (condition, method, metric) has one mean-type parts table per seed."""
    parts = {
        key: {seed: QueryParts(QIDS, v[:, None], "mean") for seed, v in enumerate(per_seed)}
        for key, per_seed in columns.items()
    }
    conditions = sorted({c for c, _, _ in columns})
    kinds = kinds or {c: ("in-domain", "standard") for c in conditions}
    tested: dict[str, tuple[str, str | None]] = {c: ("wikiqa", None) for c in conditions}
    table = seeds if seeds is not None else pd.DataFrame(columns=["condition", "method", "seed"])
    return FinishedRun(Path("runs/hand"), SPEC, table, pd.DataFrame(), kinds, None, Records(parts), tested)


LOWER_ECE = Claim(
    id="000-ece",
    paper=Paper("a test"),
    grid="g",
    text="the ensemble lowers ECE",
    source="Penha & Hauff, 2021, Table 2",
    quote="−14 %",
    paper_effect=-0.14,
    method="ensemble",
    metric="ECE",
    scale="relative",
    expect="lower",
)


@pytest.fixture(name="run_of")
def run_of_fixture() -> Callable[..., FinishedRun]:
    return run_of


@pytest.fixture(name="values")
def values_fixture() -> Callable[[float, float, int], np.ndarray]:
    return values


@pytest.fixture
def lower_ece() -> Claim:
    return LOWER_ECE
