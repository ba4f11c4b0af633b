"""Whether a run directory's numbers are this checkout's: the keys seeds.csv records against the plan.

``rankuq run`` writes, beside each (condition, method, seed) row of seeds.csv, the cell's predictions
key (``bench.planning.plan``: a hash of the data files, training settings, method, members and dropout-mask
version behind its scores) and the probes' version. ``check`` plans the folder's own grid.yaml with
this checkout and compares: a run made by other code or data (a new mask version, an edited data
file) differs in the cells it touched, so `rankuq findings` does not report it as current.

The metrics' own code is not keyed: evaluation is never cached, so a changed estimator shows when the
grid is rerun, not here.
"""

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rankuq.bench.config.grid import GridSpec
from rankuq.bench.evaluation.probe_cache import PROBES_VERSION
from rankuq.bench.planning.plan import Plan, plan, search_choice
from rankuq.bench.rundir.layout import RunLayout
from rankuq.methods.base import MethodParams

PREDICTIONS_KEY, PROBES = "predictions key", "probes version"
KEY_COLUMNS = (PREDICTIONS_KEY, PROBES)
CURRENT, STALE, NOT_RECORDED, UNCHECKED = "current", "stale", "not recorded", "not checked"


def recorded_keys(grid: Plan) -> dict[str, list[str] | list[int]]:
    """The key columns of seeds.csv, one value per cell of ``grid`` in its order."""
    return {PREDICTIONS_KEY: [cell.key for cell in grid.cells], PROBES: [PROBES_VERSION] * len(grid.cells)}


@dataclass(frozen=True)
class Provenance:
    """How a run directory's cells compare with what this checkout would make of its grid."""

    status: str  # CURRENT, STALE, NOT_RECORDED or UNCHECKED
    cells: int  # rows of seeds.csv
    stale: tuple[str, ...] = ()  # the cells that differ, each with what differs

    def describe(self) -> str:
        if self.status == STALE:
            differ = f"{len(self.stale)} of {self.cells} cells differ from this checkout's"
            return f"{STALE}: {differ} ({self.stale[0]})"
        return (
            f"{self.status}: "
            + {
                CURRENT: f"all {self.cells} cells have this checkout's predictions keys and probes version",
                NOT_RECORDED: "seeds.csv has no key columns (written by rankuq run since 2026-11-26)",
                UNCHECKED: "a training search chose its members' settings and the folder keeps no search",
            }[self.status]
        )


def check(folder: Path, spec: GridSpec, params: dict[str, MethodParams], seeds: pd.DataFrame) -> Provenance:
    """Compare seeds.csv's recorded keys with the plan of ``spec`` (the folder's grid.yaml)."""
    if not set(KEY_COLUMNS) <= set(seeds.columns):
        return Provenance(NOT_RECORDED, len(seeds))
    grid = plan(spec, params, RunLayout(folder))
    if any(search_choice(grid.layout, job) is None for job in grid.searches):
        return Provenance(UNCHECKED, len(seeds))
    recorded = {
        (row.condition, row.method, int(row.seed)): (str(row[PREDICTIONS_KEY]), int(row[PROBES]))
        for _, row in seeds.iterrows()
    }
    stale = []
    for cell in grid.cells:
        found = recorded.pop((cell.condition, cell.method, cell.seed), None)
        where = f"{cell.method}, {cell.condition}, seed {cell.seed}"
        if found is None:
            stale.append(f"{where}: not in seeds.csv")
        elif found != (cell.key, PROBES_VERSION):
            stale.append(
                f"{where}: predictions key {found[0]}, probes version {found[1]} recorded; "
                f"{cell.key} and {PROBES_VERSION} now"
            )
    stale += [f"{method}, {condition}, seed {seed}: not in grid.yaml" for condition, method, seed in recorded]
    return Provenance(STALE if stale else CURRENT, len(seeds), tuple(stale))
