"""The claim registry (bench.findings.claims): every claim declared once, with its source, on a grid
that exists, its paper effect in the direction it claims, and sanity checks naming real conditions."""

from pathlib import Path

from rankuq.bench.config.grid import load_grid
from rankuq.bench.findings.claims import CLAIMS, COST

GRIDS = Path(__file__).parents[3] / "bench" / "grids"


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
