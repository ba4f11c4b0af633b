"""Whether a run directory's cells are this checkout's: the tiny WikiQA grid run once (the session
fixture ``finished``) records its plan's keys, is current, and turns stale when the code that made a
cell changes (a dropout-mask version, as MASKS 2 did on 2026-11-25) or seeds.csv was made otherwise."""

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from rankuq.bench.config.grid import load_grid
from rankuq.bench.evaluation.probe_cache import PROBES_VERSION
from rankuq.bench.findings.claims import CLAIMS
from rankuq.bench.findings.findings import findings
from rankuq.bench.planning.plan import plan
from rankuq.bench.results import provenance
from rankuq.bench.results.provenance import CURRENT, NOT_RECORDED, PREDICTIONS_KEY, PROBES, STALE, check
from rankuq.bench.rundir.layout import RunLayout
from rankuq.errors import RankuqError
from rankuq.methods.mc_dropout import MCDropout

CLAIMS_OF_TINY = [replace(claim, grid="tiny") for claim in CLAIMS if claim.grid == "paper000"]


def read_seeds(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "seeds.csv", dtype={PREDICTIONS_KEY: str})


def test_seeds_csv_records_each_cell_s_planned_keys_and_the_run_is_current(finished):
    run_dir, _ = finished
    spec, params = load_grid(run_dir / "grid.yaml")
    cells = plan(spec, params, RunLayout(run_dir)).cells
    seeds = read_seeds(run_dir)
    assert list(seeds.columns[:5]) == ["condition", "method", "seed", PREDICTIONS_KEY, PROBES]
    assert list(zip(seeds.method, seeds.seed, seeds[PREDICTIONS_KEY], strict=True)) == [
        (cell.method, cell.seed, cell.key) for cell in cells
    ]
    assert (seeds[PROBES] == PROBES_VERSION).all()
    found = check(run_dir, spec, params, seeds)
    assert (found.status, found.cells, found.stale) == (CURRENT, 8, ())  # 4 methods × 2 seeds


def test_a_new_mask_version_makes_exactly_the_mask_drawing_cells_stale(finished, monkeypatch):
    run_dir, _ = finished
    spec, params = load_grid(run_dir / "grid.yaml")
    monkeypatch.setattr(MCDropout, "draws", MCDropout.draws + 1)
    found = check(run_dir, spec, params, read_seeds(run_dir))
    assert found.status == STALE
    cells = [f"mc_dropout, wikiqa, seed {seed}" for seed in (0, 1)]
    assert [line.split(":")[0] for line in found.stale] == cells
    differ = "stale: 2 of 8 cells differ from this checkout's"
    assert found.describe().startswith(f"{differ} ({cells[0]}: predictions key")


def test_an_old_probes_version_a_missing_cell_and_no_key_columns(finished):
    run_dir, _ = finished
    spec, params = load_grid(run_dir / "grid.yaml")
    seeds = read_seeds(run_dir)
    older = seeds.assign(**{PROBES: seeds[PROBES].where(seeds.method != "bm25", PROBES_VERSION - 1)})
    found = check(run_dir, spec, params, older)
    assert [line.split(":")[0] for line in found.stale] == ["bm25, wikiqa, seed 0", "bm25, wikiqa, seed 1"]
    assert f"probes version {PROBES_VERSION - 1} recorded" in found.stale[0]
    found = check(run_dir, spec, params, seeds[seeds.method != "bert"])
    assert found.stale == ("bert, wikiqa, seed 0: not in seeds.csv", "bert, wikiqa, seed 1: not in seeds.csv")
    found = check(run_dir, spec, params, seeds.drop(columns=[PREDICTIONS_KEY, PROBES]))
    assert found.status == NOT_RECORDED and found.describe().startswith("not recorded: seeds.csv has no key")


def test_findings_refuses_a_stale_run_and_writes_it_marked_when_allowed(kept, tmp_path, monkeypatch):
    folder = kept  # what paper_runs/ keeps of the tiny run
    out = tmp_path / "findings.md"
    findings([folder], out, CLAIMS_OF_TINY)
    current = out.read_text()
    assert f"| {folder} | tiny | 8 | current: all 8 cells have this checkout's" in current
    monkeypatch.setattr(provenance, "PROBES_VERSION", PROBES_VERSION + 1)  # the probes changed since
    refused = rf"{folder}: stale: 8 of 8 cells .* rerun `rankuq run .*--allow-stale"
    with pytest.raises(RankuqError, match=refused):
        findings([folder], out, CLAIMS_OF_TINY)
    assert out.read_text() == current  # nothing written
    findings([folder], out, CLAIMS_OF_TINY, allow_stale=True)
    marked = out.read_text()
    assert "--allow-stale" in marked.splitlines()[2]  # the command that wrote it
    assert f"| {folder} | tiny | 8 | stale: 8 of 8 cells differ" in marked
    assert "(a stale run: see the run directories below)" in marked
