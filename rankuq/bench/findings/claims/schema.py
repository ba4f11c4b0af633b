"""What a claim is: ``Claim``, the paper it belongs to (``Paper``), its vocabulary (kinds of condition,
expectations, scales, preconditions), the rules that give a paper's claim its preconditions
(``needs``, ``claim``), and the names the papers' modules share (methods, list variants, the cost
timings' file)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, ParamSpec

from rankuq.bench.statistics import Expect

# cross-reference: the ranker and its test lists in domain, the probes' reference set (the dev split they
# fit on) from another side (Gisserot-Boukhlef et al., 2024, §5.4); a claim names it, ALL_KINDS does not.
Kind = Literal["in-domain", "cross-domain", "cross-NS", "cross-reference"]
ALL_KINDS: tuple[Kind, ...] = ("in-domain", "cross-domain", "cross-NS")
SHIFTS: tuple[Kind, ...] = ("cross-domain", "cross-NS")
# What a claim expects of d: what the statistics judge, and "no worse" (non-inferiority), the papers'
# wording of a floor under d that the verdicts judge as "at least" −margin (bench.findings.verdicts).
ClaimExpect = Literal[Expect, "no worse"]
Scale = Literal["absolute", "relative"]
# What a condition must show before a claim is judged in it (bench.findings.verdicts):
# works_in_domain: bert's AP (and the method's) significantly above BM25's where it was trained;
# shift_hurts: bert's AP is significantly lower in the condition than that of bert trained on the same
#   test lists' task and negatives (the condition is a shift at all);
# headroom: the baseline's value leaves room for the paper's effect (R@1 below its ceiling);
# b_selected: RA's b on dev is not 0 in every seed (a degenerate selection is no finding);
# distinct: checked for every claim, never declared: the two sides differ on some query and seed (two
#   identical rankings, e.g. a deterministic ranker's CVaR ranking, give d = 0 with no spread: no test).
# repeats: checked for every cost claim, never declared: a timing rests on at least 10 timed repeats
#   (statistics.MIN_REPEATS), since an exact test over n repeats cannot give p below 2 / 2ⁿ.
Precondition = Literal["works_in_domain", "shift_hurts", "headroom", "b_selected", "distinct", "repeats"]


@dataclass(frozen=True)
class Check:
    """One precondition in one condition: passed, failed, or not checkable (``passed`` None)."""

    name: Precondition
    passed: bool | None
    detail: str


@dataclass(frozen=True)
class Paper:
    """A paper (or a pair of papers read together) whose claims the registry holds, by the name the
    report counts its verdicts under (/work/shared/papers has the texts)."""

    name: str


@dataclass(frozen=True)
class Claim:
    """One claim of ``paper`` about one method, measured in the run of grid ``grid``; ``paper`` None:
    this project's own sanity check (a floor a working setup must reach), reported apart.

    The effect d per seed compares ``metric`` of ``method`` with a reference on the same queries:
    ``against`` (another method's same metric; default: the grid's baseline), ``reference`` (other
    metrics of the same cell; several: their best, the largest), both (the ``reference`` metric of
    method ``against``'s cell, e.g. the Bayesian model's CVaR ranking against the deterministic
    model's nDCG@10), ``floor`` (a constant), or ``baseline_condition`` "no-shift": ``method``'s own
    ``metric`` in the grid's condition without shift on the same test data, i.e. the in-domain
    condition that trains on this condition's test task and tests on the same test queries, with the
    negative sampling of its training lists and the same list variant (for a cross-NS condition the
    candidate lists differ in their negatives only); paired by seed and query.
    ``scale``: d = value − reference ("absolute") or (value − reference) / reference ("relative").
    ``expect``: the paper's direction of d, "within" ± ``margin`` (equivalence, in the claim's
    scale), "no worse" (non-inferiority: d ≥ −``margin``, the paper's "better, or at most margin
    worse"), "at least" ``floor`` (d = value − floor ≥ 0) or "at most" ``floor`` (a ceiling:
    d = value − floor ≤ 0). "higher"/"lower" read d against 0, so they take a floor of 0 only.
    ``paper_effect``: the paper's d in the same scale and sign convention (None: the paper gives no
    number); ``source`` cites the table or figure, ``quote`` quotes what the paper reports.
    ``kinds``, ``variant``, ``condition``: the conditions of the grid the claim is about.
    Over several conditions the overall verdict is the pooled estimate's, or "mixed" where the
    conditions disagree in direction (one's 95 % CI on each side of 0), whatever their own verdicts.
    """

    id: str
    paper: Paper | None
    grid: str
    text: str
    source: str
    quote: str
    paper_effect: float | None
    method: str
    metric: str
    against: str | None = None
    reference: tuple[str, ...] | None = None
    floor: float | None = None
    baseline_condition: Literal["no-shift"] | None = None
    scale: Scale = "absolute"
    expect: ClaimExpect = "higher"
    margin: float = 0.0
    kinds: tuple[Kind, ...] = ALL_KINDS
    variant: str | None = "standard"
    condition: str | None = None
    preconditions: tuple[Precondition, ...] = ()

    def __post_init__(self) -> None:
        if self.floor not in (None, 0.0) and self.expect in ("higher", "lower"):
            raise ValueError(
                f"claim {self.id}: a floor of {self.floor:g} with expect {self.expect!r} would be judged "
                "against 0; use expect 'at least' (a floor) or 'at most' (a ceiling)"
            )

    @property
    def sanity(self) -> bool:
        """This project's check of the model fit, not a paper's claim."""
        return self.paper is None

    def compared(self) -> str:
        if self.floor is not None:
            return f"{self.floor:g}"
        if self.baseline_condition is not None:
            return f"{self.method} without shift"
        if self.reference is None:
            return self.against or "the baseline"
        best = self.reference[0] if len(self.reference) == 1 else f"best of {', '.join(self.reference)}"
        return f"{self.against}'s {best}" if self.against else best


def needs(metric: str, kinds: Sequence[Kind]) -> tuple[Precondition, ...]:
    """A paper claim's preconditions by the registry's rules (``bench.findings.claims``)."""
    rules: tuple[tuple[Precondition, bool], ...] = (
        ("works_in_domain", True),
        ("shift_hurts", any(kind in SHIFTS for kind in kinds)),
        ("headroom", "R@1" in metric),
        ("b_selected", metric.startswith("RA.")),
    )
    return tuple(name for name, holds in rules if holds)


Fields = ParamSpec("Fields")


def _by_the_rules(declare: Callable[Fields, Claim]) -> Callable[Fields, Claim]:
    def claim(*args: Fields.args, **fields: Fields.kwargs) -> Claim:
        """A paper's claim, with ``Claim``'s own fields; its preconditions by ``needs`` unless given."""
        declared = declare(*args, **fields)
        if "preconditions" in fields:
            return declared
        return replace(declared, preconditions=needs(declared.metric, declared.kinds))

    return claim


claim = _by_the_rules(Claim)

R10 = "imbalance"  # tasks.lists variant: exactly 1 relevant and n − 1 = 9 negatives (grids: n: 10)
STOCHASTIC = ("mc_dropout", "ensemble")  # S-BERT^D, S-BERT^E: paper effects in this order
GP = ("sngp", "gpf", "pg_gp")
NAMES = {"bert": "BERT", "mc_dropout": "MC Dropout", "ensemble": "Ensemble"}
NAMES |= {"sngp": "SNGP", "gpf": "GPF-BERT", "pg_gp": "PG-DRR"}  # the papers' names of the methods

# Inference cost is no grid's: a run directory holds no scoring times (cached predictions would carry
# stale ones). The cost claims read method_cost's CSVs of timed repeats (rankuq findings --cost FILE, once
# per file): a GPU's timings are judged, a CPU's are shown as what they are (``bench.findings.cost``).
COST = "method_cost"
COST_COLUMNS = ("layers", "pairs", "threads", "precision", "method", "label", "repeat", "seconds", "command")
# A CPU condition's label: on one CPU thread in fp32 a method's time is its forward passes times bert's.
CPU = "forward-pass count on a CPU (not a GPU timing)"
