"""`rankuq findings`: the registry's claims, the conditions of the paper grids, and the claims
measured in the real tiny WikiQA grid run (the session fixture ``finished``), rewritten byte for
byte; the verdict rules themselves are tests/bench/findings/test_verdicts.py's, the cost claims
test_cost.py's."""

import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.cli.main import main
from rankuq.bench.config.grid import load_grid, parse_grid
from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import CLAIMS, COST, Claim
from rankuq.bench.findings.render import findings
from rankuq.bench.findings.runs import condition_kind, read_run
from rankuq.bench.findings.verdicts import assess, judge_all
from rankuq.errors import RankuqError

GRIDS = Path(__file__).parents[3] / "bench" / "grids"


def test_the_kinds_of_the_paper_000_conditions():
    spec, _ = load_grid(GRIDS / "paper000.yaml")
    kinds = {shift.label(): condition_kind(spec, shift) for shift in spec.conditions()}
    assert kinds["clariq"] == "in-domain"
    assert kinds["wikiqa-to-clariq"] == "cross-domain" and kinds["wikiqa-to-trecqa_clean"] == "cross-domain"
    assert kinds["clariq-bm25-to-random"] == "cross-NS" and kinds["clariq-bm25-to-random-nota"] == "cross-NS"
    trecqa = parse_grid({"shifts": [{"train": {"task": "trecqa"}, "test": {"task": "trecqa_clean"}}],
                         "methods": {"bm25": {}}}, "test grid")[0]  # fmt: skip
    assert condition_kind(trecqa, trecqa.conditions()[0]) == "cross-NS"  # native test lists, BM25 training


def test_every_claim_is_declared_once_with_its_source_and_a_grid_that_exists():
    ids = [claim.id for claim in CLAIMS]
    assert len(ids) == len(set(ids))
    grids = {path.stem for path in GRIDS.glob("*.yaml")} | {COST}
    assert {claim.grid for claim in CLAIMS} <= grids
    for claim in CLAIMS:
        assert claim.source and claim.paper, claim.id
        if claim.paper_effect is not None and claim.expect in ("higher", "lower"):
            assert (claim.paper_effect > 0) == (claim.expect == "higher"), claim.id  # d's sign is the paper's


def test_the_sanity_checks_name_conditions_of_their_grid():
    for claim in CLAIMS:
        if claim.condition is None or claim.grid == COST:
            continue
        spec, _ = load_grid(GRIDS / f"{claim.grid}.yaml")
        assert claim.condition in {shift.label() for shift in spec.conditions()}, claim.id


TINY_CLAIMS = (
    Claim(
        id="ece-ensemble",
        grid="tiny",
        text="the ensemble lowers ECE",
        source="a test",
        paper="−14 %",
        paper_effect=-0.14,
        method="ensemble",
        metric="ECE",
        scale="relative",
        expect="lower",
        kinds=("cross-NS",),
        preconditions=("above_bm25",),
    ),
    Claim(
        id="ra-mc_dropout",
        grid="tiny",
        text="RA raises R@1",
        source="a test",
        paper="+1.7 %",
        paper_effect=0.017,
        method="mc_dropout",
        metric="RA.R@1",
        reference=("R@1",),
        scale="relative",
        kinds=("cross-NS",),
        preconditions=("b_selected",),
    ),
    Claim(
        id="ap-floor",
        grid="tiny",
        text="bert reaches AP 0.2",
        source="a test",
        paper="0.2",
        paper_effect=None,
        method="bert",
        metric="AP",
        floor=0.2,
        expect="at least",
        kinds=("cross-NS",),
        sanity=True,
    ),
)


def test_findings_on_the_real_tiny_run_and_a_byte_identical_rewrite(finished, tmp_path):
    run_dir, board = finished
    # The tiny grid's one condition trains on BM25 lists and tests on WikiQA's native ones: cross-NS.
    spec, _ = load_grid(run_dir / "grid.yaml")
    assert condition_kind(spec, spec.conditions()[0]) == "cross-NS"
    out = tmp_path / "findings.md"
    findings([run_dir], out, TINY_CLAIMS)
    first = out.read_bytes()
    findings([run_dir], out, TINY_CLAIMS)
    assert out.read_bytes() == first
    assert (tmp_path / "findings-forest.png").read_bytes().startswith(b"\x89PNG")
    text = first.decode()
    assert "](findings-forest.png)" in text and "| **inconclusive** |" in text  # the definitions
    # The per-query records give seeds.csv's values: d is the seeds' mean of the relative ECE change.
    seeds = pd.read_csv(run_dir / "seeds.csv").set_index(["method", "seed"])
    relative = [
        (seeds.loc[("ensemble", s), "ECE"] - seeds.loc[("bert", s), "ECE"]) / seeds.loc[("bert", s), "ECE"]
        for s in (0, 1)
    ]
    [ece, ra, floor] = judge_all([assess(claim, [read_run(run_dir)]) for claim in TINY_CLAIMS])
    assert ece.measured[0].effect.d == pytest.approx(np.mean(relative), rel=1e-9)
    assert ece.measured[0].value == pytest.approx(board.set_index("method").loc["ensemble", "ECE"], rel=1e-9)
    gain = [
        (seeds.loc[("mc_dropout", s), "RA.R@1"] - seeds.loc[("mc_dropout", s), "R@1"])
        / seeds.loc[("mc_dropout", s), "R@1"]
        for s in (0, 1)
    ]
    if ra.verdict != statistics.UNTESTABLE:
        assert ra.measured[0].effect.d == pytest.approx(np.mean(gain), rel=1e-9)
    else:  # b = 0 in both seeds: the tiny model's dev curve is flat
        assert "b per seed" in ra.note
    assert floor.overall.d == pytest.approx(board.set_index("method").loc["bert", "AP"], rel=1e-9)
    # The verdicts are the taxonomy's, in the table and the per-condition rows.
    for row in (ece, ra, floor):
        assert f"**{row.verdict}**" in text
    assert "| ece-ensemble | wikiqa |" in text


def test_a_results_folder_of_four_files_gives_the_same_findings(finished, kept, tmp_path):
    """What results/ commits of a grid (the fixture ``kept``) is all findings reads: the same rows as
    the whole run directory."""
    run_dir, _ = finished
    claims = TINY_CLAIMS
    out = tmp_path / "findings.md"
    findings([run_dir], out, claims)
    whole = out.read_text()
    findings([kept], out, claims)
    assert out.read_text().replace(str(kept), "RUN") == whole.replace(str(run_dir), "RUN")
    (kept / "leaderboard.csv").unlink()
    with pytest.raises(RankuqError, match=r"leaderboard\.csv not found"):
        findings([kept], out, claims)


def test_docs_findings_md_is_what_its_own_command_writes_from_the_committed_results(tmp_path, monkeypatch):
    """docs/findings.md is generated, not typed: its header's command, run on the results/ folders git
    keeps (and planning each grid to check that its cells are this checkout's), rewrites it exactly."""
    root = Path(__file__).parents[3]
    doc = (root / "docs" / "findings.md").read_text()
    found = re.search(r"Generated by `(rankuq findings [^`]+)`", doc)
    assert found is not None
    args = shlex.split(found.group(1))[2:]
    out = tmp_path / "findings.md"
    args[args.index("--out") + 1] = str(out)
    monkeypatch.chdir(root)  # the command names results/… and docs/… from the repository's root
    assert main(["findings", *args]) == 0
    assert out.read_text().replace(str(out), "docs/findings.md") == doc
