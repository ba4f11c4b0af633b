"""The cost claims: a method's inference time over another's, per timed repeat of
``bench.benchmarks.method_cost``'s file, one condition per MiniLM depth; the repeats are resampled
as queries are."""

import numpy as np
import pandas as pd

from rankuq.bench.findings import statistics
from rankuq.bench.findings.claims import Claim
from rankuq.bench.findings.rows import Measured, Row
from rankuq.bench.findings.sides import bootstrap, contrast, side_values
from rankuq.bench.probes.parts import QueryParts


def assess_cost(claim: Claim, cost: pd.DataFrame | None) -> Row:
    """A cost claim measured in method_cost's table ``cost`` (verdicts come in ``judge_all``)."""
    if cost is None:
        note = "no cost file given: `rankuq findings RUN_DIR… --cost FILE`, FILE from method_cost --out"
        return Row(claim, None, (), statistics.NOT_MEASURED, note)
    measured = tuple(m for _, rows in cost.groupby("layers") if (m := _measure_cost(claim, rows)) is not None)
    note = "" if measured else f"the cost file has no timings of {claim.method} and {claim.compared()}"
    return Row(claim, None, measured, statistics.NOT_MEASURED, note, command=str(cost.command.iloc[0]))


def _measure_cost(claim: Claim, rows: pd.DataFrame) -> Measured | None:
    """The claim at one MiniLM depth. Its metric "time (× X)" is, per timed repeat, a method's time
    over X's in the same repeat (the methods take turns within a repeat); the repeats are resampled as
    queries are (one seed)."""
    denominator = claim.metric.removeprefix("time (× ").removesuffix(")")

    def times(method: str) -> np.ndarray | None:
        timed = rows[rows.method == method]
        if timed.label.nunique() != 1:  # absent, or several settings of it (last_layer_mc's T)
            return None
        return timed.sort_values("repeat").seconds.to_numpy(dtype=float)

    methods = [claim.method] if claim.floor is not None else [claim.method, str(claim.against)]
    base, timed = times(denominator), [times(m) for m in methods]
    if base is None or any(t is None or len(t) != len(base) for t in timed):
        return None
    repeats = np.array([str(r) for r in range(len(base))])
    sides = [{0: QueryParts(repeats, (t / base)[:, None], "mean")} for t in timed if t is not None]
    first = rows.iloc[0]
    versus = f"; vs {rows[rows.method == claim.against].label.iloc[0]}" if len(methods) > 1 else ""
    values = side_values(sides)
    return Measured(
        f"MiniLM-L{first.layers}, {first.pairs} WikiQA test pairs, {first.precision}{versus}",
        bootstrap(sides, contrast(claim, len(sides))),
        values[0],
        claim.floor if claim.floor is not None else values[1],
        unit="timed repeats",
    )
