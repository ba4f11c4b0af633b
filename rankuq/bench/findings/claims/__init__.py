"""The papers' claims as data: one ``Claim`` per claim and method, as ir_measures declares measures,
declared in one module per paper (``paper000``, ``paper001``, ``paper002``, ``paper003_004``: PG-DRR and
GPF-BERT read together) beside this project's ``sanity`` checks; ``schema`` says what a claim is.

A claim says which paper makes it, which grid measures it, in which conditions, the method and the
metric, what it is compared with, in which terms (absolute or relative, as the paper states its
effect), the paper's effect as a number, the direction (or equivalence margin, or floor) and the
preconditions a condition must meet before the claim can be judged in it. The verdict logic is
``bench.findings.verdicts``.

Reading the registry:
- Ids are stable (readers cite them); a claim whose meaning changes gets a new id.
- Sources: 000 Penha & Hauff 2021, 001 Cohen et al. 2021, 002 Gisserot-Boukhlef et al. 2024, 003 PG-DRR
  (Ye et al. 2023), 004 GPF-BERT 2023 (/work/shared/papers). ``quote`` quotes the numbers the effect is
  computed from; a table's "%" of ECE in 003/004 are ECE points, so their claims are absolute.
- Metric keys are the run's per-query metric keys (seeds.csv columns). ``RA.<m>``: RA with b chosen on dev
  in the paper's [0, 1]; ``RA.neg.<m>``: b chosen on dev among negative values only (risk-seeking); the
  chosen b is the metric's prefix + ".b" (``RA.b``, ``RA.neg.b``), what ``b_selected`` reads.
  ``nAUC.<m>.u_lin@<N>``: u_lin fitted on N reference queries. ``time (× X)`` (grid ``COST``): a method's
  seconds over X's in the same timed repeat of method_cost (same layers, pairs, threads, precision).
- ``R10``: paper 000's R_10 lists (one relevant and nine non-relevant candidates per query), the list
  variant of every paper's R@1 claim (and of papers 000/003/004's others), so R@1 has no ceiling below 1.
- Preconditions follow fixed rules (``schema.needs``, applied by ``schema.claim``; the rules themselves:
  ``preconditions.RULES``): every paper claim is about a ranker that works where it was trained
  (works_in_domain: bert, and the method under test, above BM25 in its training domain, never under the
  shift); shift_hurts where its kinds include a shift, judged in those conditions only (an in-domain
  condition passes it); headroom for R@1; b_selected for RA. Sanity checks and cost claims have none.
- ``sanity``: this project's checks of the model fit (``paper`` None), reported apart, not a paper's claim.
"""

from rankuq.bench.findings.claims import paper000, paper001, paper002, paper003_004, sanity
from rankuq.bench.findings.claims.schema import (
    ALL_KINDS,
    COST,
    COST_COLUMNS,
    CPU,
    R10,
    SHIFTS,
    Check,
    Claim,
    ClaimExpect,
    Kind,
    Paper,
    Precondition,
    Scale,
    claim,
    needs,
)

# The report's order: the sanity checks, each paper's claims, then the inference cost claims.
CLAIMS: tuple[Claim, ...] = (
    *sanity.CLAIMS,
    *paper000.CLAIMS,
    *paper001.CLAIMS,
    *paper002.CLAIMS,
    *paper003_004.CLAIMS,
    *paper001.COST_CLAIMS,
    *paper003_004.COST_CLAIMS,
)

__all__ = [
    "ALL_KINDS",
    "CLAIMS",
    "COST",
    "COST_COLUMNS",
    "CPU",
    "R10",
    "SHIFTS",
    "Check",
    "Claim",
    "ClaimExpect",
    "Kind",
    "Paper",
    "Precondition",
    "Scale",
    "claim",
    "needs",
]
