"""ERCE (Cohen et al., 2021 eq. 12), declared here beside the other metrics for its facts (a
calibration error: lower is better); the calibration probe measures it (``bench.probes.calibration``),
since it compares the scores of each draw, which a predictions table's mean does not keep."""

from rankuq.bench.metrics.base import family
from rankuq.bench.metrics.matrix import RankedLists
from rankuq.errors import RankuqError


@family("ERCE", cutoff="none", pooled=True, kind="calibration", better="lower", probe="calibration")
def erce(lists: RankedLists) -> float:
    """The expected ranking calibration error (Cohen et al., 2021 eq. 12): ECE of the pairs of a relevant
    and a non-relevant candidate of one query, P(D_i > D_j) against whether that order is right, in
    equal-mass bins; measured by the calibration probe (``eval.probes``), not from a predictions table."""
    raise RankuqError(
        f"{lists.source}: ERCE is measured by the calibration probe from each draw's scores, not from "
        "a predictions table; add calibration to eval.probes"
    )
