"""The preconditions of a claim in a condition (``check``), as the papers set their experiments up:
the ranker works where it was trained (bert, and the method under test, significantly above BM25 in
AP on the test lists of its training domain), the shift hurts (bert's AP on the condition's lists
below that of the model trained on those lists' own task and negatives), headroom below the metric's
ceiling for the paper's effect, and a risk aversion b that is not 0 in every seed. One that fails makes
the condition *untestable* with the reason; its effect is still measured and shown."""

from collections.abc import Callable

import numpy as np

from rankuq.bench import statistics
from rankuq.bench.findings import conditions
from rankuq.bench.findings.claims import SHIFTS, Check, Claim, Precondition
from rankuq.bench.findings.runs import FinishedRun
from rankuq.bench.findings.sides import bootstrap, no_shift_condition, source_condition
from rankuq.bench.statistics.parts import QueryParts

PRECONDITION_METRIC = "AP"  # a working ranker and a hurting shift are judged on AP: no ceiling below 1
NOT_RANKERS = ("bert", "bm25")  # bert is always checked; BM25 is the yardstick

# The rules as the report's header states them, one line per precondition.
RULES: dict[str, str] = {
    "works_in_domain": "the ranker works where it was trained: bert's AP, and that of the method under "
    "test where it is another neural ranker, significantly above BM25's on the test lists of the domain "
    "(and negative sampling) it was trained on, or on that domain's lists where a grid declares the "
    "papers' in-domain setting (gp: trained on random negatives as 003/004, tested on BM25 lists) (for "
    "a shifted condition, the grid's in-domain condition with the same training side); never required "
    "under the shift itself, which the papers study because it breaks rankers. One cause, one verdict: "
    "a method that fails it makes every claim about it untestable, its effectiveness against bert's "
    "included (a head that does not rank is not refuted claim by claim); and a shift whose reference "
    "(bert trained on the test domain, the no-shift model) fails it there is untestable for that "
    "reason, not for shift_hurts",
    "shift_hurts": "the shift hurts, on the same test lists: bert's AP in the shifted condition "
    "significantly below the AP of bert trained on those lists' own domain and negatives (cross-domain: "
    "trained on the test task; cross-NS: trained with the tested negatives), that reference itself "
    "above BM25 there (works_in_domain)",
    "headroom": "room below R@1's ceiling (1/#relevant per query) for the paper's effect",
    "b_selected": "risk aversion b chosen on dev is not 0 in every seed (else RA is the mean ranking)",
    "distinct": "the two sides differ on some query and seed (else d has no spread to test)",
    "repeats": "a timing rests on at least 10 timed repeats, tested exactly over them (a sign-flip "
    "test, whose smallest p over n repeats is 2 / 2ⁿ: 0.25 at 3, 0.002 at 10); the row says n",
}


def check(name: Precondition, claim: Claim, run: FinishedRun, condition: str, reference: float) -> Check:
    """One precondition of a claim in a condition (see ``bench.findings.claims.Precondition``)."""
    if name == "works_in_domain":
        found = works_in_domain(run, condition, rankers_of(claim))
        plain = no_shift_condition(run, condition) if claim.baseline_condition is not None else None
        if found.passed is False or plain is None or plain == condition:
            return found
        # a claim against the model without shift (the shift's reference) needs that model working too
        plain_works = _reference_works(run, plain, claim.method)
        if plain_works.passed is False or (found.passed and plain_works.passed is None):
            return plain_works
        if found.passed is None:
            return found
        return Check(name, True, f"{found.detail}; {plain_works.detail}")
    if name == "shift_hurts":
        if run.kinds[condition][0] not in SHIFTS:
            return Check(name, True, "no shift of the ranker's data in this condition")
        return shift_hurts(run, condition)
    if name == "headroom":
        return _headroom(claim, run, condition, reference)
    if name == "b_selected":
        return _b_selected(claim, run, condition)
    raise ValueError(f"unknown precondition {name!r}; valid: {', '.join(RULES)}")


def rankers_of(claim: Claim) -> tuple[str, ...]:
    """The rankers whose working a claim needs: bert, and the method under test if it is another, its
    effectiveness claims included: a method that does not work where it was trained makes them
    untestable for that one cause, not refuted (a GP head below BM25 does not "lose BERT's R@1" as a
    finding of its own)."""
    return ("bert",) if claim.method in NOT_RANKERS else ("bert", claim.method)


def works_in_domain(run: FinishedRun, condition: str, rankers: tuple[str, ...] = ("bert",)) -> Check:
    """Each ranker significantly above BM25 in AP where ``condition``'s ranker was trained."""
    source = source_condition(run, condition)
    if source is None:
        train = run.trained.get(condition)
        where = f" ({train.label()})" if train is not None else ""
        missing = f"no in-domain condition of grid {run.spec.name} trains as {condition} does{where}"
        variant = run.kinds[condition][1]
        found = _in_grid_file(run, lambda among: conditions.source(among, train, variant) if train else None)
        fix = "add one to see whether the ranker works where it was trained"
        return Check("works_in_domain", None, f"{missing}: {found or fix}")
    checks = [ranker_check(run, source, ranker) for ranker in rankers]
    passed = _all(checks)
    where = "here" if source == condition else f"in {source}, where it was trained"
    cause = [c for c in checks if c.passed is passed] if not passed else checks  # the failing rankers alone
    return Check("works_in_domain", passed, f"{where}: " + "; ".join(c.detail for c in cause))


def _all(checks: list[Check]) -> bool | None:
    """Failed where one failed, else not checkable where one could not be checked, else passed."""
    if any(c.passed is False for c in checks):
        return False
    return None if any(c.passed is None for c in checks) else True


def ranker_check(run: FinishedRun, condition: str, ranker: str = "bert") -> Check:
    """``ranker``'s AP against BM25's in ``condition``; worked out once per run."""
    key = ("works_in_domain", condition, ranker)
    if key not in run.checked:
        mine, bm25 = (run.parts(condition, m, PRECONDITION_METRIC) for m in (ranker, "bm25"))
        what = f"{ranker}'s {PRECONDITION_METRIC} − BM25's"
        run.checked[key] = _compared(
            "works_in_domain", mine, bm25, what, above=True, missing=f"no {ranker} and bm25 AP in {condition}"
        )
    result: Check = run.checked[key]
    return result


def shift_hurts(run: FinishedRun, condition: str) -> Check:
    """bert's AP in the shifted ``condition`` against the in-domain model's on the same test lists; where
    that reference is not above BM25 in its own condition, a failed works_in_domain naming it."""
    key = ("shift_hurts", condition, "bert")
    if key not in run.checked:
        plain = no_shift_condition(run, condition)
        if plain is None:
            tested, variant = run.tested[condition], run.kinds[condition][1]
            task, ns = tested
            lists = f"{task}{'' if ns is None else ':' + ns}, {variant} lists"
            grid = run.spec.name
            missing = f"no in-domain condition of grid {grid} trains on and tests {condition}'s lists"
            found = _in_grid_file(run, lambda among: conditions.no_shift(among, tested, variant))
            fix = "add one to compare the shifted model with"
            run.checked[key] = Check("shift_hurts", None, f"{missing} ({lists}): {found or fix}")
        elif not (reference := _reference_works(run, plain)).passed:
            # the shift's reference not above BM25 on its own domain: the shift is compared with no
            # working ranker; the cause is that, not the shift
            run.checked[key] = reference
        else:
            mine, theirs = (run.parts(c, "bert", PRECONDITION_METRIC) for c in (condition, plain))
            what = f"bert's {PRECONDITION_METRIC} here − bert trained in {plain}, on the same lists"
            run.checked[key] = _compared("shift_hurts", mine, theirs, what, above=False, missing=what)
    result: Check = run.checked[key]
    return result


def _reference_works(run: FinishedRun, plain: str, ranker: str = "bert") -> Check:
    """The shift's reference (``ranker`` trained on the test domain without shift, condition ``plain``)
    above BM25 there: passed, or a works_in_domain check naming that reference."""
    found = ranker_check(run, plain, ranker)
    if found.passed:
        return Check("works_in_domain", True, f"the shift's reference, in {plain}: {found.detail}")
    return Check(
        "works_in_domain",
        found.passed,
        f"the shift's reference, {ranker} trained in {plain} (the test domain, without shift), does not "
        f"work there: {found.detail}",
    )


def _in_grid_file(run: FinishedRun, lookup: Callable[[conditions.Conditions], str | None]) -> str | None:
    """Where the run lacks a condition that its grid file has (``lookup`` finds it there): the run is
    stale against rankuq/bench/grids/NAME.yaml, and the fix is to rerun it, not to add the condition."""
    grid = run.grid_file
    if grid is None or grid.conditions is None:
        return None
    found = lookup(grid.conditions)
    if found is None:
        return None
    return (
        f"{grid.path} has it ({found}): the run is stale against its grid file; rerun "
        f"{grid.rerun(run.folder)}"
    )


def _compared(
    name: Precondition,
    mine: dict[int, QueryParts],
    theirs: dict[int, QueryParts],
    what: str,
    above: bool,
    missing: str,
) -> Check:
    """Passed when the difference mine − theirs is significantly above (or below) 0 (its 95 % CI)."""
    if not mine or not theirs:
        return Check(name, None, f"{missing}: not recorded")
    effect = bootstrap([mine, theirs], statistics.difference(0, 1))
    if effect is None:
        return Check(name, None, f"{what}: no shared seed and query")
    passed = effect.low > 0 if above else effect.high < 0
    return Check(name, passed, f"{what} = {effect.d:+.3f} [{effect.low:+.3f}, {effect.high:+.3f}]")


def _headroom(claim: Claim, run: FinishedRun, condition: str, reference: float) -> Check:
    """The paper's effect fits below the metric's ceiling (``<metric>.ceiling``: R@1 is at most
    1/#relevant of a query)."""
    ceiling = run.parts(condition, claim.method, "R@1.ceiling")
    if not ceiling:
        return Check("headroom", None, "no R@1.ceiling recorded")
    top = float(np.mean([parts.value() for parts in ceiling.values()]))
    needed = abs(claim.paper_effect or 0.0) * (abs(reference) if claim.scale == "relative" else 1.0)
    room = top - reference
    return Check(
        "headroom",
        room >= needed and room > 0,
        f"{claim.compared()} {reference:.3f} against R@1's ceiling {top:.3f}: room {room:.3f}, the paper's "
        f"effect needs {needed:.3f}",
    )


def _b_selected(claim: Claim, run: FinishedRun, condition: str) -> Check:
    """RA's b chosen on dev (the metric's prefix + ".b": RA.b, RA.neg.b) is not 0 in every seed."""
    column = claim.metric.rsplit(".", 1)[0] + ".b"
    rows = run.seeds[(run.seeds.condition == condition) & (run.seeds.method == claim.method)]
    if column not in rows or rows[column].isna().all():
        return Check("b_selected", None, f"no {column} recorded")
    chosen = rows.sort_values("seed")[column].to_numpy(dtype=float)
    return Check(
        "b_selected", bool((chosen != 0).any()), f"b per seed: {', '.join(f'{b:g}' for b in chosen)}"
    )
