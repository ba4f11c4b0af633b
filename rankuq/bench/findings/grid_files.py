"""Whether a run directory is current with its grid file: the run's grid.yaml against the checkout's
rankuq/bench/grids/NAME.yaml (NAME the grid's name) by content key, the key MLflow tracks a grid by
(``bench.results.tracking``: ``content_key("grid", spec)``), and, where they differ, what differs: the
conditions one has and the other lacks, and every other setting by its dotted name. A run that is stale
against its grid file is still judged (its numbers are what its own grid.yaml made); the report says so,
and a precondition that its grid file would meet reads "rerun it", not "add" the condition."""

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from rankuq.bench.config.grid import GridSpec, load_grid
from rankuq.bench.findings.conditions import Conditions, of_spec
from rankuq.bench.planning.plan import content_key
from rankuq.bench.results.tracking import flat

Status = Literal["current", "stale", "no grid file"]
CURRENT: Status = "current"
STALE: Status = "stale"
NO_FILE: Status = "no grid file"
GRIDS = "rankuq/bench/grids"  # where the checkout keeps its grid files, as the report names them


@dataclass(frozen=True)
class GridFile:
    """A run's grid against its grid file: ``status``, both content keys, what differs, and the grid
    file's conditions (None without a file)."""

    path: str  # rankuq/bench/grids/NAME.yaml
    status: Status
    run_key: str
    file_key: str | None = None
    differences: tuple[str, ...] = ()
    conditions: Conditions | None = None

    @property
    def stale(self) -> bool:
        return self.status == STALE

    def describe(self) -> str:
        if self.status == NO_FILE:
            return f"no grid file {self.path} in this checkout (grid key {self.run_key})"
        if self.status == CURRENT:
            return f"current: the run's grid.yaml is {self.path} (grid key {self.run_key})"
        return f"stale: grid key {self.run_key} in the run, {self.file_key} in {self.path}; " + "; ".join(
            self.differences
        )

    def rerun(self, folder: Path) -> str:
        """The command that brings the run up to its grid file (it redoes what changed)."""
        return f"`rankuq run {self.path} --run-dir {folder}`"


def grid_key(spec: GridSpec) -> str:
    """A grid's content key: every validated setting (``bench.results.tracking``'s grid key)."""
    return content_key("grid", spec.model_dump(mode="json"))


def against_grid_file(spec: GridSpec, grids: Path | None = None) -> GridFile:
    """The run's grid ``spec`` against ``grids``/NAME.yaml (default: the package's rankuq/bench/grids)."""
    name = f"{spec.name}.yaml"
    found = grids / name if grids is not None else resources.files("rankuq.bench.grids").joinpath(name)
    path = f"{GRIDS}/{name}" if grids is None else str(grids / name)
    key = grid_key(spec)
    if not found.is_file():
        return GridFile(path, NO_FILE, key)
    file_spec, _ = load_grid(Path(str(found)))
    file_key = grid_key(file_spec)
    found_conditions = of_spec(file_spec)
    if file_key == key:
        return GridFile(path, CURRENT, key, file_key, (), found_conditions)
    return GridFile(path, STALE, key, file_key, differences(spec, file_spec, path), found_conditions)


def differences(run: GridSpec, file: GridSpec, path: str) -> tuple[str, ...]:
    """What differs between the run's grid and its grid file: conditions by name, then settings."""
    mine = {shift.label(): shift for shift in run.conditions()}
    theirs = {shift.label(): shift for shift in file.conditions()}
    found = []
    added = [name for name in theirs if name not in mine]
    if added:
        found.append(f"{path} adds condition{'s' if len(added) > 1 else ''} {', '.join(added)}")
    dropped = [name for name in mine if name not in theirs]
    if dropped:
        found.append(f"{path} drops condition{'s' if len(dropped) > 1 else ''} {', '.join(dropped)}")
    changed = [name for name in mine if name in theirs and mine[name] != theirs[name]]
    if changed:
        found.append(f"condition{'s' if len(changed) > 1 else ''} {', '.join(changed)} changed")
    a, b = (flat(spec.model_dump(mode="json", exclude={"tasks", "shifts"})) for spec in (run, file))
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            found.append(f"{key}: {a.get(key)!r} in the run, {b.get(key)!r} in {path}")
    return tuple(found)
