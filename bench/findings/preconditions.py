"""The preconditions of a claim in a condition (``check``): a working ranker (bert significantly
above BM25), a shift that hurts (bert's AP below its own without shift), headroom below the metric's
ceiling for the paper's effect, and a risk aversion b that is not 0 in every seed. One that fails
makes the condition *untestable* with the reason."""

from dataclasses import dataclass

import numpy as np

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import Claim, Precondition
from rankuq.bench.findings.runs import Run
from rankuq.bench.findings.sides import bootstrap, no_shift_condition

PRECONDITION_METRIC = "AP"  # a working ranker and a hurting shift are judged on AP: no ceiling below 1


@dataclass(frozen=True)
class Check:
    """One precondition in one condition: passed, failed, or not checkable (``passed`` None)."""

    name: Precondition
    passed: bool | None
    detail: str


def check(name: Precondition, claim: Claim, run: Run, condition: str, reference: float) -> Check:
    """One precondition of a claim in a condition (see ``bench.findings.claims.Precondition``)."""
    if name == "above_bm25":
        return condition_check(name, run, condition)
    if name == "shift_hurts":
        if run.kinds[condition][0] == "in-domain":
            return Check(name, True, "no shift in this condition")
        return condition_check(name, run, condition)
    if name == "headroom":
        return _headroom(claim, run, condition, reference)
    return _b_selected(claim, run, condition)


def condition_check(name: Precondition, run: Run, condition: str) -> Check:
    """A precondition that depends on the condition alone: above_bm25 (bert's AP against BM25's in
    the condition) or shift_hurts (against its own AP without shift); worked out once per run."""
    key = (name, condition)
    if key not in run.checked:
        run.checked[key] = _condition_check(name, run, condition)
    result: Check = run.checked[key]
    return result


def _condition_check(name: Precondition, run: Run, condition: str) -> Check:
    metric = PRECONDITION_METRIC
    bert = run.parts(condition, "bert", metric)
    if name == "above_bm25":
        bm25 = run.parts(condition, "bm25", metric)
        if not bert or not bm25:
            return Check(name, None, f"the grid has no bert and bm25 {metric} in {condition}")
        effect = bootstrap([bert, bm25], statistics.difference(0, 1))
        what = f"bert's {metric} − BM25's"
    else:
        plain = no_shift_condition(run, condition)
        plain_bert = run.parts(plain, "bert", metric) if plain else {}
        if not bert or not plain_bert:
            return Check(name, None, f"no condition without shift on {condition}'s test data to compare with")
        effect = bootstrap([bert, plain_bert], statistics.difference(0, 1))
        what = f"bert's {metric} here − in {plain}"
    if effect is None:
        return Check(name, None, f"{what}: no shared seed and query")
    passed = effect.low > 0 if name == "above_bm25" else effect.high < 0
    return Check(name, passed, f"{what} = {effect.d:+.3f} [{effect.low:+.3f}, {effect.high:+.3f}]")


def _headroom(claim: Claim, run: Run, condition: str, reference: float) -> Check:
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


def _b_selected(claim: Claim, run: Run, condition: str) -> Check:
    """RA's b chosen on dev (the metric's prefix + ".b": RA.b, RA.neg.b) is not 0 in every seed."""
    column = claim.metric.rsplit(".", 1)[0] + ".b"
    rows = run.seeds[(run.seeds.condition == condition) & (run.seeds.method == claim.method)]
    if column not in rows or rows[column].isna().all():
        return Check("b_selected", None, f"no {column} recorded")
    chosen = rows.sort_values("seed")[column].to_numpy(dtype=float)
    return Check(
        "b_selected", bool((chosen != 0).any()), f"b per seed: {', '.join(f'{b:g}' for b in chosen)}"
    )
