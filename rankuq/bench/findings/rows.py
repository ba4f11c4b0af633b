"""What measuring and judging a claim gives: ``Measured``, the claim in one condition, and ``Row``,
the claim over its conditions."""

import math
from dataclasses import dataclass

from rankuq.bench import statistics
from rankuq.bench.findings.claims import Check, Claim
from rankuq.bench.findings.runs import FinishedRun


@dataclass(frozen=True)
class Measured:
    """A claim in one condition: its effect, the two sides' values, the checks, the verdict."""

    condition: str
    effect: statistics.Effect | statistics.RepeatTest | None  # a grid's bootstrap, or a timing's exact test
    value: float  # the method's metric, mean over seeds
    reference: float  # what it is compared with, mean over seeds
    checks: tuple[Check, ...] = ()
    verdict: str = statistics.NOT_MEASURED
    note: str = ""
    p: float = math.nan  # the claim's test (``statistics.claim_p``): d = 0, TOST, or against the floor
    adjusted_p: float = math.nan  # that p, Benjamini–Hochberg adjusted over the registry's conditions
    unit: str = "seeds × queries"
    descriptive: bool = False  # shown, not judged (a CPU's forward-pass count): outside BH and the estimate
    digest: str = ""  # the test it is (``sides.digest``): cells two grids share give one, tested once

    @property
    def failed(self) -> Check | None:
        return next((c for c in self.checks if c.passed is False or c.passed is None), None)


@dataclass(frozen=True)
class Row:
    """A claim over its conditions: each condition measured, the overall verdict."""

    claim: Claim
    run: FinishedRun | None
    measured: tuple[Measured, ...]
    verdict: str
    note: str
    overall: statistics.Estimate | None = None  # one condition's effect, or the conditions pooled
    overall_p: float = math.nan  # the claim's test on its overall estimate
    overall_adjusted_p: float = math.nan  # adjusted over the registry's claims
    command: str = ""  # what produced the measurements, where no run directory did
    duplicate_of: str = ""  # the id of an earlier claim that made the same tests on the same cells
