"""A run against its grid file (bench.findings.grid_files): the content keys of a run's grid.yaml and of
rankuq/bench/grids/NAME.yaml, what differs between them, and a precondition that the grid file would meet
reading "rerun" rather than "add"."""

from dataclasses import replace
from pathlib import Path

import pandas as pd
import yaml

from rankuq.bench import statistics
from rankuq.bench.config.grid import Side, load_grid, parse_grid
from rankuq.bench.findings.grid_files import CURRENT, NO_FILE, STALE, against_grid_file, grid_key
from rankuq.bench.findings.run_tables import runs_table, stale_runs
from rankuq.bench.findings.verdicts import assess, judge_all
from rankuq.bench.results import provenance

GRID = {
    "name": "shifty",
    "shifts": [
        {"name": "wikiqa", "train": {"task": "wikiqa", "ns": "native"}, "test": {"task": "wikiqa"}},
        {
            "name": "wikiqa-to-trecqa_clean",
            "train": {"task": "wikiqa", "ns": "native"},
            "test": {"task": "trecqa_clean"},
        },
    ],
    "methods": {"bm25": {}, "bert": {}},
    "train": {"epochs": 2},
}
REFERENCE = {
    "name": "trecqa_clean",
    "train": {"task": "trecqa_clean", "ns": "native"},
    "test": {"task": "trecqa_clean"},
}


def _write(folder: Path, grid: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{grid['name']}.yaml"
    path.write_text(yaml.safe_dump(grid))
    return path


def test_a_run_is_current_with_its_grid_file_by_content_key_and_stale_naming_what_differs(tmp_path):
    spec, _ = parse_grid(GRID, "the run's grid.yaml")
    grids = tmp_path / "grids"
    _write(grids, GRID)
    same = against_grid_file(spec, grids)
    assert same.status == CURRENT and same.file_key == same.run_key == grid_key(spec) and not same.stale
    # The grid file gains the shift's no-shift reference and a third epoch: another key, both named.
    newer = {**GRID, "shifts": [*GRID["shifts"], REFERENCE], "train": {"epochs": 3}}
    _write(grids, newer)
    stale = against_grid_file(spec, grids)
    assert stale.status == STALE and stale.stale and stale.file_key != stale.run_key
    path = str(grids / "shifty.yaml")
    assert stale.differences == (
        f"{path} adds condition trecqa_clean",
        f"train.epochs: 2 in the run, 3 in {path}",
    )
    assert stale.describe().startswith(f"stale: grid key {stale.run_key} in the run, {stale.file_key} in")
    assert "trecqa_clean" in stale.conditions.kinds  # the grid file's own conditions
    # A setting the grid spells differently but means the same (a default written out) is no change.
    _write(grids, {**GRID, "seeds": [0]})
    assert against_grid_file(spec, grids).status == CURRENT
    assert against_grid_file(spec, tmp_path / "elsewhere").status == NO_FILE


def test_the_packaged_grid_files_are_what_the_report_compares_with():
    """Without a folder, a run is compared with the checkout's rankuq/bench/grids/NAME.yaml."""
    path = Path(__file__).parents[3] / "rankuq" / "bench" / "grids" / "paper002.yaml"
    spec, _ = load_grid(path)
    found = against_grid_file(spec)
    assert found.path == "rankuq/bench/grids/paper002.yaml" and found.status == CURRENT
    assert found.file_key == grid_key(spec)


def _shifted(run_of, values, grid_file):
    """A run of ``GRID``: wikiqa in domain, wikiqa → trecqa_clean, but not trecqa_clean in domain."""
    records = {
        ("wikiqa", "bert", "AP"): [values(0.70, 0.05, 20 + s) for s in range(3)],
        ("wikiqa", "bm25", "AP"): [values(0.50, 0.05, 30 + s) for s in range(3)],
        ("wikiqa", "ensemble", "AP"): [values(0.72, 0.05, 40 + s) for s in range(3)],
        ("shifted", "bert", "ECE"): [values(0.20, 0.01, s) for s in range(3)],
        ("shifted", "ensemble", "ECE"): [values(0.10, 0.01, 10 + s) for s in range(3)],
        ("shifted", "bert", "AP"): [values(0.40, 0.05, 50 + s) for s in range(3)],
    }
    kinds = {"wikiqa": ("in-domain", "standard"), "shifted": ("cross-domain", "standard")}
    run = run_of(records, kinds=kinds)
    run.tested.update({"wikiqa": ("wikiqa", None), "shifted": ("trecqa_clean", None)})
    wikiqa = Side(task="wikiqa", ns="native")
    run.trained.update({"wikiqa": wikiqa, "shifted": wikiqa})
    return replace(run, grid_file=grid_file)


def test_a_precondition_the_grid_file_would_meet_says_rerun_not_add(run_of, values, lower_ece, tmp_path):
    spec, _ = parse_grid(GRID, "the run's grid.yaml")
    grids = tmp_path / "grids"
    _write(grids, {**GRID, "shifts": [*GRID["shifts"], REFERENCE]})
    stale = against_grid_file(spec, grids)
    claim = replace(lower_ece, preconditions=("works_in_domain", "shift_hurts"), kinds=("cross-domain",))
    [row] = judge_all([assess(claim, [_shifted(run_of, values, stale)])])
    note = row.measured[0].note
    assert row.verdict == statistics.UNTESTABLE and note.startswith("shift_hurts: no in-domain condition")
    assert "the run is stale against its grid file; rerun `rankuq run" in note and "add one" not in note
    assert "has it (trecqa_clean)" in note
    # The same run with a grid file that lacks the reference too: add one.
    _write(grids, GRID)
    [row] = judge_all([assess(claim, [_shifted(run_of, values, against_grid_file(spec, grids))])])
    assert "add one to compare the shifted model with" in row.measured[0].note
    assert "stale" not in row.measured[0].note


def test_the_report_names_a_stale_run_in_its_header_and_its_run_table(run_of, values, tmp_path):
    spec, _ = parse_grid(GRID, "the run's grid.yaml")
    grids = tmp_path / "grids"
    _write(grids, {**GRID, "train": {"epochs": 3}})
    run = replace(run_of({}), grid_file=against_grid_file(spec, grids), seeds=pd.DataFrame({"seed": [0]}))
    header = "\n".join(stale_runs([run]))
    assert header.startswith("**Stale against rankuq/bench/grids/**")
    assert "train.epochs: 2 in the run, 3 in" in header
    table = "\n".join(runs_table([run]))
    assert "| current with its grid file |" in table and "| stale: grid key " in table
    assert "rerun `rankuq run " in table
    current = replace(run, grid_file=against_grid_file(spec, tmp_path / "none"))
    assert stale_runs([current]) == [] and "no grid file" in "\n".join(runs_table([current]))


def test_the_header_names_a_run_whose_cells_this_checkout_would_make_otherwise(run_of, tmp_path):
    """A run current with its grid file can still hold cells of other lists or code (BM25's lists when
    their ties went by row): the header names it beside the grid-file warning, which it does not raise."""
    spec, _ = parse_grid(GRID, "the run's grid.yaml")
    grids = tmp_path / "grids"
    _write(grids, GRID)
    differs = "bm25, clariq, seed 0: predictions key aaaa, probes version 4 recorded; bbbb and 4 now"
    found = provenance.Provenance(provenance.STALE, 12, (differs,))
    run = replace(run_of({}), grid_file=against_grid_file(spec, grids), provenance=found)
    header = "\n".join(stale_runs([run]))
    assert header.startswith("**Not what this checkout makes of their grid.yaml**")
    assert (
        "Stale against" not in header
        and f"stale: 1 of 12 cells differ from this checkout's ({differs})" in header
    )
    made_here = replace(run, provenance=provenance.Provenance(provenance.CURRENT, 12))
    assert stale_runs([made_here]) == []
