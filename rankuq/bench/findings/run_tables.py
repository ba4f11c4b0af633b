"""The findings report's tables about its run directories: the device each trained on, each
condition's preconditions, paper 002's break-even per seed, and whether each run is what this checkout
makes of its grid and of its grid file; with the cell formatting the report shares (the header's
tables of scale and stand-ins are ``bench.findings.scale``'s)."""

import json
import math
import shlex
from collections.abc import Sequence

from rankuq.bench.findings.claims import SHIFTS, Check
from rankuq.bench.findings.grid_files import GRIDS
from rankuq.bench.findings.preconditions import ranker_check, shift_hurts
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.findings.sides import source_condition
from rankuq.bench.results.provenance import STALE
from rankuq.bench.results.rendering import markdown_text
from rankuq.errors import RankuqError

MARKS = {True: "✓", False: "✗", None: "?"}  # a precondition passed, failed, not checked


def cell(text: str) -> str:
    """The registry's own text in a table cell: only the pipe needs escaping."""
    return text.replace("|", "\\|")


def reproducing_command(run: FinishedRun) -> str:
    return (
        f"`rankuq run {shlex.quote(str(run.folder / 'grid.yaml'))} --run-dir {shlex.quote(str(run.folder))}`"
    )


def is_stale(run: FinishedRun) -> bool:
    return run.provenance is not None and run.provenance.status == STALE


def device_of(run: FinishedRun) -> str:
    """Where a run's members trained: the machine its run directory records, else the grid's
    resources (no GPU per trial: the CPU)."""
    recorded = run.folder / "machine.json"  # written by the full-scale GPU call (benchmarks.gpu.fullscale)
    if recorded.is_file():
        try:
            described = json.loads(recorded.read_text(encoding="utf-8"))
            name, weights = described.get("gpu") or described["device"], described.get("weights")
        except (OSError, ValueError, KeyError, AttributeError) as error:
            raise RankuqError(f"{recorded}: not a JSON object with a device ({error})") from None
        return f"{name} (weights: {weights})" if weights else str(name)
    return "CPU" if run.spec.resources.gpus_per_trial == 0 else "GPU (not recorded)"


def runs_table(runs: Sequence[FinishedRun]) -> list[str]:
    if not runs:
        return []
    lines = [
        "## Run directories",
        "",
        "Whether each run's cells are what this checkout makes of its grid.yaml "
        "(`rankuq.bench.results.provenance`: the predictions key and probes version seeds.csv "
        "records per cell against the grid's plan now), whether that grid.yaml is the checkout's grid "
        f"file (`{GRIDS}/NAME.yaml`, by the grid's content key; stale: what differs, and the command "
        "that brings the run up to it), and whether it has per-query records.",
        "",
        "| run directory | grid | cells | made by this checkout | current with its grid file "
        "| per-query records |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        found = run.provenance
        records = "queries.parquet" if run.queries is not None else "none: rerun"
        made = "not checked" if found is None else found.describe()
        cells = len(run.seeds) if found is None else found.cells
        lines.append(
            f"| {markdown_text(str(run.folder))} | {run.spec.name} | {cells} | {cell(made)} | "
            f"{cell(grid_file_text(run))} | {records} |"
        )
    return lines


def grid_file_text(run: FinishedRun) -> str:
    """The run's grid against its grid file, and for a stale one the command that updates it."""
    grid = run.grid_file
    if grid is None:
        return "not compared"
    if grid.stale:
        return f"{grid.describe()}: rerun {grid.rerun(run.folder)}"
    return grid.describe()


def stale_runs(runs: Sequence[FinishedRun]) -> list[str]:
    """The report header's warnings: the runs whose grid.yaml is not their grid file's (named, with what
    differs and the command that brings them up to it), and the runs whose cells this checkout would
    make otherwise (other predictions keys: other lists, code or data); nothing when every run is current."""
    lines = []
    against_file = [run for run in runs if run.grid_file is not None and run.grid_file.stale]
    if against_file:
        lines += [
            f"**Stale against {GRIDS}/**: these runs are judged as their own grid.yaml made them, and their "
            'grid files have changed since; a precondition their grid file would meet reads "rerun":',
            "",
            *(f"- {markdown_text(str(run.folder))}: {cell(grid_file_text(run))}" for run in against_file),
            "",
        ]
    made_otherwise = [(run, run.provenance) for run in runs if run.provenance and is_stale(run)]
    if made_otherwise:
        lines += [
            "**Not what this checkout makes of their grid.yaml**: these runs' cells hold other predictions "
            "keys than this checkout plans for them (`rankuq.bench.results.provenance`: other candidate "
            "lists, code or data); they are judged as they were made, and rerunning their grid.yaml "
            "remakes the cells that differ:",
            "",
            *(
                f"- {markdown_text(str(run.folder))}: {cell(found.describe())}"
                for run, found in made_otherwise
            ),
            "",
        ]
    return lines


def preconditions_table(runs: Sequence[FinishedRun]) -> list[str]:
    """Every condition of every run with per-query records: does bert work where it was trained
    (above BM25 on its training domain's lists), and, for a shifted condition, does the shift hurt it
    on the same test lists? bert against BM25 in the condition itself is shown, not required."""
    lines = [
        "## Preconditions per condition",
        "",
        "Whether each condition can test a claim (the rules at the top): `bert`'s AP against BM25's where it"
        " was trained, and, for a shift, against the AP of bert trained on the tested lists' own domain and"
        " negatives, on the same lists (95 % CIs, the same bootstrap). bert against BM25 in the condition "
        "itself is shown for reading, not required: the papers study rankers that the shift breaks.",
        "",
        "| grid | condition | kind | trained in | bert works where trained | the shift hurts bert | bert "
        "against BM25 here |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        if run.queries is None:
            continue
        for condition, (kind, _) in run.kinds.items():
            source = source_condition(run, condition)
            works = ranker_check(run, source) if source is not None else None
            hurts = shift_hurts(run, condition) if kind in SHIFTS else None
            here = ranker_check(run, condition)
            lines.append(
                f"| {run.spec.name} | {markdown_text(condition)} | {kind} | "
                f"{markdown_text(source) if source else _no_source(run)} | {_mark(works)} | "
                f"{_mark(hurts, 'shift_hurts')} | {_mark(here)} |"
            )
    return [*lines, ""] if len(lines) > 6 else []


def _no_source(run: FinishedRun) -> str:
    grid = run.grid_file
    if grid is not None and grid.stale:
        return f"? none in the run (stale: see {grid.path})"
    return "? none in the grid"


def _mark(found: Check | None, column: str = "works_in_domain") -> str:
    """A check in its column; one that failed for another precondition's reason says which (a shift
    whose reference does not work: works_in_domain in the shift's column)."""
    if found is None:
        return "—"
    name = "" if found.name == column else f"{found.name}: "
    return cell(f"{MARKS[found.passed]} {name}{found.detail}")


BREAK_EVEN = "break_even.AP"  # the abstention probe's smallest reference size from which u_lin beats u_std
PAPER_BREAK_EVEN = (9, 80)  # Gisserot-Boukhlef et al. 2024, Table 5: per dataset (38 on average)


def _works(run: FinishedRun, condition: str) -> bool | None:
    """Whether bert works where ``condition``'s ranker was trained (None: not checkable)."""
    source = source_condition(run, condition) if run.queries is not None else None
    return ranker_check(run, source).passed if source is not None else None


def break_even_text(value: float, largest: float) -> str:
    """A seed's break-even: the size, or "> N" when u_lin never stayed ahead within the N reference
    queries the dev split has (censored)."""
    return f"> {largest:.0f}" if math.isnan(value) else f"{value:.0f}"


def break_even_reading(values: Sequence[float], largest: float) -> str:
    """Where the seeds' break-evens fall against the paper's largest (no test: a size per seed)."""
    high = PAPER_BREAK_EVEN[1]
    beyond = sum(v > high or (math.isnan(v) and largest >= high) for v in values)
    unknown = sum(math.isnan(v) and largest < high for v in values)
    if unknown:
        return f"{unknown} of {len(values)} seeds censored before {high}: the dev split is too small to tell"
    if beyond:
        return f"{beyond} of {len(values)} seeds beyond the paper's {high}"
    return f"every seed within the paper's {high}"


def break_even_table(runs: Sequence[FinishedRun]) -> list[str]:
    """bert's break-even per seed in each condition of the runs that measured it (paper 002, §5.5)."""
    lines = [
        "## Reference size at which u_lin overtakes u_std",
        "",
        f"Paper 002 (Gisserot-Boukhlef et al. 2024, Table 5) reports the number of reference queries from "
        f"which u_lin stays ahead of u_std: {PAPER_BREAK_EVEN[0]} to {PAPER_BREAK_EVEN[1]} per dataset, 38 "
        "on average. Here bert's, per seed (the abstention probe's `break_even.AP`, on reference sets drawn "
        'from the dev split, sizes 5, 10, 20, 50, 100, … and the whole split); "> N": u_lin never stayed '
        "ahead within the N queries the dev split has (censored). A size per seed, no test: the rows are "
        "described, not judged, and read only where bert works where it was trained.",
        "",
        "| grid | condition | bert works where trained | dev queries (N) | break-even per seed "
        "| against the paper |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        if BREAK_EVEN not in run.seeds:
            continue
        bert = run.seeds[run.seeds.method == "bert"].sort_values("seed")
        for condition, cell in bert.groupby("condition", sort=False):
            values = cell[BREAK_EVEN].tolist()
            largest = float(cell[f"{BREAK_EVEN}.largest"].max())
            sizes = ", ".join(break_even_text(v, largest) for v in values)
            works = _works(run, str(condition))
            lines.append(
                f"| {run.spec.name} | {markdown_text(condition)} | {MARKS[works]} | {largest:.0f} | "
                f"{sizes} | {break_even_reading(values, largest) if works else '—'} |"
            )
    return [*lines, ""] if len(lines) > 8 else []
