"""The paper grids hold the conditions their claims are judged in: every claim of the registry finds a
condition of its kinds, list variant and name in its grid, every shifted condition has the no-shift
condition its shift claims compare with, and the grids keep what issue 29 asks of them (R_10 lists,
every domain a target in paper000, dense negatives, NOTA across domains and negative sampling, BM25 and
the stochastic methods beside the GP heads). No Ray, nothing written: the grids are only loaded."""

from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from rankuq.bench.config.grid import GridSpec, load_grid
from rankuq.bench.findings.claims import CLAIMS, COST, R10, SHIFTS, Claim
from rankuq.bench.findings.conditions import condition_kind
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.findings.sides import no_shift_condition, source_condition
from rankuq.bench.findings.verdicts import conditions_of
from rankuq.methods.base import MethodParams

GRIDS = Path(__file__).parents[3] / "rankuq" / "bench" / "grids"
JUDGED = [claim for claim in CLAIMS if claim.grid != COST]
DOMAINS = {"wikiqa", "clariq", "semeval", "trecqa_clean"}


@cache
def grid(name: str, folder: Path = GRIDS) -> tuple[GridSpec, dict[str, MethodParams], FinishedRun]:
    """The grid file and a run of it as findings sees one before it has any result: its conditions'
    kinds, tested variants and tasks (``folder``: the CPU grids, or rankuq/bench/grids/gpu's full-scale
    ones)."""
    spec, params = load_grid(folder / f"{name}.yaml")
    shifts = spec.conditions()
    kinds = {shift.label(): (condition_kind(spec, shift), shift.test.variant) for shift in shifts}
    tested = {shift.label(): (shift.test.task, shift.test.ns) for shift in shifts}
    trained = {shift.label(): shift.train for shift in shifts}
    return (
        spec,
        params,
        FinishedRun(GRIDS, spec, pd.DataFrame(), pd.DataFrame(), kinds, tested=tested, trained=trained),
    )


# The CPU grids and their full-scale GPU versions (rankuq/bench/grids/gpu: the papers' grids, not the
# fit_* ones).
FOLDERS = {"cpu": GRIDS, "gpu": GRIDS / "gpu"}
CLAIM_GRIDS = [
    pytest.param(claim, folder, id=f"{claim.id}-{kind}")
    for claim in JUDGED
    for kind, folder in FOLDERS.items()
    if (folder / f"{claim.grid}.yaml").is_file()
]
GRID_FILES = [
    pytest.param(name, folder, id=f"{name}-{kind}")
    for name in sorted({claim.grid for claim in JUDGED})
    for kind, folder in FOLDERS.items()
    if (folder / f"{name}.yaml").is_file()
]


@pytest.mark.parametrize(("claim", "folder"), CLAIM_GRIDS)
def test_every_claim_finds_its_conditions_in_its_grid(claim: Claim, folder: Path):
    spec, params, run = grid(claim.grid, folder)
    found = conditions_of(claim, run)
    assert found, f"{claim.grid} has no {'/'.join(claim.kinds)} condition on {claim.variant} lists"
    methods = {claim.method, claim.against or spec.baseline}
    assert methods <= set(params), f"{claim.grid} lacks {methods - set(params)}"
    if "works_in_domain" in claim.preconditions:
        assert {"bert", "bm25"} <= set(params)
        for condition in found:
            assert source_condition(run, condition), f"{condition}: no in-domain condition trains as it does"
    if "shift_hurts" in claim.preconditions or claim.baseline_condition == "no-shift":
        for condition in found:
            if run.kinds[condition][0] in SHIFTS:
                assert no_shift_condition(run, condition), f"{condition} has no condition without shift"


@pytest.mark.parametrize(("name", "folder"), GRID_FILES)
def test_every_shift_has_its_no_shift_reference(name: str, folder: Path):
    *_, run = grid(name, folder)
    for condition, (kind, variant) in run.kinds.items():
        if kind in SHIFTS:
            reference = no_shift_condition(run, condition)
            assert reference is not None, condition
            assert run.tested[reference] == run.tested[condition] and run.kinds[reference][1] == variant


def test_paper_000_tests_every_domain_on_r10_lists_with_dense_negatives_and_nota_under_both_shifts():
    spec, params, run = grid("paper000")
    tests = {shift.label(): shift.test for shift in spec.conditions()}
    assert {run.tested[c][0] for c in run.kinds} == DOMAINS
    assert all((side.variant, side.n) == (R10, 10) for side in tests.values() if side.variant != "nota")
    assert any(run.kinds[c][0] == "cross-NS" and side.ns == "dense" for c, side in tests.items())
    nota = {run.kinds[c][0] for c, side in tests.items() if side.variant == "nota"}
    assert nota == {"in-domain", "cross-domain", "cross-NS"}
    assert params["mc_dropout"].T == 10 and params["ensemble"].M == 5 and "bm25" in params


def test_the_gp_grids_hold_bm25_and_r10_lists_and_gp_compares_with_mc_dropout_and_the_ensemble():
    for name in ("gp", "gp_fit"):
        spec, params, run = grid(name)
        assert "bm25" in params and all((s.test.variant, s.test.n) == (R10, 10) for s in spec.conditions())
    spec, params, run = grid("gp")
    assert params["mc_dropout"].T == 10 and params["ensemble"].M == 5
    assert {kind for kind, _ in run.kinds.values()} == {"in-domain", "cross-domain"}
    # SemEval trains as 003/004 do, on random negatives, tested and early-stopped on BM25 lists
    semeval = next(s for s in spec.conditions() if s.label() == "semeval")
    assert (semeval.train.ns, semeval.test.ns, run.kinds["semeval"][0]) == ("random", "bm25", "in-domain")
    assert spec.train.early_stopping is not None and spec.train.early_stopping.ns == "bm25"


@pytest.mark.parametrize("name", ["paper001", "paper001_l4"])
def test_paper_001_tests_semeval_graded_in_domain_beside_wikiqa_to_semeval_graded(name: str):
    # BERT-L2 does not learn TrecQA from its 94 training questions, so the graded out-of-distribution
    # collection is SemEval's, with its in-domain model (which does learn) as the no-shift reference
    *_, run = grid(name)
    assert run.kinds["semeval_graded"] == ("in-domain", "standard")
    assert run.kinds["wikiqa-to-semeval_graded"][0] == "cross-domain"
    assert no_shift_condition(run, "wikiqa-to-semeval_graded") == "semeval_graded"


@pytest.mark.parametrize("name", ["paper000", "paper001", "paper001_l4", "gp", "gp_fit"])
def test_the_claim_grids_stop_early_on_dev(name: str):
    spec, *_ = grid(name)
    assert spec.train.early_stopping is not None and spec.train.epochs >= 2 and len(spec.seeds) >= 3
