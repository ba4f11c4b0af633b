"""The claim registry (bench.findings.claims): every claim declared once, with its source, on a grid
that exists, its paper effect in the direction it claims, and sanity checks naming real conditions."""

from pathlib import Path

import pytest

from rankuq.bench.config.grid import load_grid
from rankuq.bench.findings.claims import (
    CLAIMS,
    COST,
    Claim,
    paper000,
    paper001,
    paper002,
    paper003_004,
    sanity,
    schema,
)

GRIDS = Path(__file__).parents[3] / "rankuq" / "bench" / "grids"
# a paper 000 claim's fields apart from what a test varies
FIELDS = dict(
    id="x", paper=paper000.PAPER, grid="paper000", text="t", source="s", quote="q", paper_effect=None
)


def test_every_claim_is_declared_once_with_its_source_and_a_grid_that_exists():
    ids = [claim.id for claim in CLAIMS]
    assert len(ids) == len(set(ids))
    grids = {path.stem for path in GRIDS.glob("*.yaml")} | {COST}
    assert {claim.grid for claim in CLAIMS} <= grids
    for claim in CLAIMS:
        assert claim.source and claim.quote, claim.id
        if claim.paper_effect is not None and claim.expect in ("higher", "lower"):
            assert (claim.paper_effect > 0) == (claim.expect == "higher"), claim.id  # d's sign is the paper's


def test_the_sanity_checks_name_conditions_of_their_grid():
    for claim in CLAIMS:
        if claim.condition is None or claim.grid == COST:
            continue
        spec, _ = load_grid(GRIDS / f"{claim.grid}.yaml")
        assert claim.condition in {shift.label() for shift in spec.conditions()}, claim.id


def test_each_paper_module_declares_its_own_paper_s_claims_and_the_sanity_checks_none():
    modules = (paper000, paper001, paper002, paper003_004)
    for module in modules:
        for claim in (*module.CLAIMS, *getattr(module, "COST_CLAIMS", ())):
            assert claim.paper == module.PAPER and not claim.sanity, claim.id
    assert all(claim.paper is None and claim.sanity for claim in sanity.CLAIMS)
    # the registry is the modules' claims, each once
    declared = [c for m in (sanity, *modules) for c in (*m.CLAIMS, *getattr(m, "COST_CLAIMS", ()))]
    assert sorted(c.id for c in declared) == sorted(c.id for c in CLAIMS)


def test_a_paper_s_claim_gets_its_preconditions_by_the_rules_unless_it_names_them():
    ruled = schema.claim(**FIELDS, method="mc_dropout", metric="RA.R@1", kinds=("cross-NS",))
    assert ruled.preconditions == ("works_in_domain", "shift_hurts", "headroom", "b_selected")
    named = schema.claim(**FIELDS, method="bert", metric="ECE", preconditions=("works_in_domain",))
    assert named.preconditions == ("works_in_domain",)
    assert Claim(**FIELDS, method="bert", metric="ECE").preconditions == ()  # Claim itself: no rules


def test_a_floor_other_than_0_needs_a_bound_expectation():
    """ "higher"/"lower" read d against 0: a floor of 0.036 there would judge the value against 0."""
    with pytest.raises(ValueError, match="'at most'"):
        Claim(**FIELDS, method="bert", metric="ECE", floor=0.036, expect="lower")
    assert Claim(**FIELDS, method="bert", metric="ECE", floor=0.036, expect="at most").floor == 0.036
    assert Claim(**FIELDS, method="m", metric="moments.rho.variance", floor=0.0, expect="lower").floor == 0.0
