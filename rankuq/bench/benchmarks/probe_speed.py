"""Probe speed on a synthetic table: 1,000,000 queries × 10 candidates by default.

Times, from an in-memory predictions table (no file reading): ranking and padding the table once,
the effectiveness metrics, ECE (10 equal-width bins), ERCE and the reference-free abstention
nAUCs, which the 2-second bar covers, and the adaptive ECE beside it; then the effectiveness
metrics end to end (``bench.metrics.compute``) against ir-measures (pytrec_eval) on the same
queries, checking that every value agrees to 1e-9.

    python -m rankuq.bench.benchmarks.probe_speed [--queries N] [--candidates L] [--repeats R]

The whole sequence runs ``repeats`` times and each stage's fastest time is reported (our
end-to-end effectiveness likewise, fastest of ``repeats``); ir-measures runs once.
"""

import argparse
import os
import time

import numpy as np
import pyarrow as pa

from rankuq.bench import metrics
from rankuq.bench.metrics.ece import expected_calibration_error
from rankuq.bench.predictions import predictions_table
from rankuq.bench.probes import abstention, calibration, scored_lists
from rankuq.bench.probes.confidence import REFERENCE_FREE

NAMES = list(metrics.DEFAULT_METRICS)
EXTRA = "ECE with 10 adaptive bins"


def synthetic_table(n_queries: int, n_candidates: int, seed: int = 0) -> pa.Table:
    """One relevant candidate per query plus 5 % more at random; scores are probabilities that
    lean towards the relevant ones, on a grid of 1/1000 so that ties occur."""
    rng = np.random.default_rng(seed)
    rows = n_queries * n_candidates
    qid = np.char.add("q", np.repeat(np.arange(n_queries), n_candidates).astype(str))
    cid = np.char.add("d", np.tile(np.arange(n_candidates), n_queries).astype(str))
    label = (rng.random(rows) < 0.05).astype(np.int8)
    label[np.arange(n_queries) * n_candidates + rng.integers(0, n_candidates, n_queries)] = 1
    score = np.round(np.clip(rng.normal(0.3 + 0.3 * label, 0.2), 0, 1), 3)
    return predictions_table(qid, cid, label, score[:, None])


def probe_stages(table: pa.Table, repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds per stage, the fastest of ``repeats`` whole runs stage by stage (a shared machine
    slows some runs), and the values of the last run; each run ranks the table afresh and its
    later stages reuse that ranking (and the effectiveness values)."""
    runs = [_timed_run(table) for _ in range(repeats)]
    return {stage: min(times[stage] for times, _ in runs) for stage in runs[0][0]}, runs[-1][1]


def _timed_run(table: pa.Table) -> tuple[dict[str, float], dict[str, float]]:
    times: dict[str, float] = {}
    values: dict[str, float] = {}
    start = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal start
        now = time.perf_counter()
        times[name], start = now - start, now

    lists = scored_lists(table)
    lap("rank and pad the table")
    values |= {name: float(v.mean()) for name, v in lists.per_query(NAMES).items()}
    lap(f"effectiveness ({', '.join(NAMES)})")
    relevant = (lists.ranked.row_labels > 0).astype(np.float64)
    values["ECE"] = expected_calibration_error(lists.ranked.scores, relevant)
    lap("ECE (10 equal-width bins)")
    values["ERCE"] = calibration.expected_ranking_calibration_error(lists)[0]
    lap("ERCE")
    found = abstention.probe(lists, confidences=REFERENCE_FREE).metrics
    values |= {name: v for name, v in found.items() if name.startswith("nAUC.AP")}
    lap("abstention nAUCs (u_max, u_std, u_1-2 × AP, nDCG@10, RR)")
    values["ECE.adaptive"] = expected_calibration_error(lists.ranked.scores, relevant, adaptive=True)
    lap(EXTRA)
    return times, values


def ir_measures_comparison(table: pa.Table, repeats: int) -> tuple[float, float, float]:
    """(our time, ir-measures time, largest difference) for the effectiveness metrics."""
    import ir_measures

    columns = [table[name].to_pylist() for name in ("qid", "cid", "label", "prob_mean")]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q, c, label, score in zip(*columns, strict=True):
        qrels.setdefault(q, {})[c] = label
        run.setdefault(q, {})[c] = score
    ours_time = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        ours = metrics.compute(table, NAMES)
        ours_time = min(ours_time, time.perf_counter() - start)
    start = time.perf_counter()
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in NAMES], qrels, run)
    theirs_time = time.perf_counter() - start
    difference = max(abs(ours[n] - theirs[ir_measures.parse_measure(n)]) for n in NAMES)
    return ours_time, theirs_time, difference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-ir-measures", action="store_true")
    args = parser.parse_args()
    table = synthetic_table(args.queries, args.candidates)
    print(f"{args.queries:,} queries × {args.candidates} candidates, {os.cpu_count()} CPUs visible")
    stages, values = probe_stages(table, args.repeats)
    extra = stages.pop(EXTRA)
    for name, seconds in stages.items():
        print(f"  {seconds:7.3f} s  {name}")
    print(f"  {sum(stages.values()):7.3f} s  total (bar: 2 s)")
    print(f"  {extra:7.3f} s  {EXTRA}, outside the bar")
    print("  values: " + ", ".join(f"{name} {value:.4f}" for name, value in values.items()))
    if not args.skip_ir_measures:
        ours, theirs, difference = ir_measures_comparison(table, args.repeats)
        print(f"effectiveness end to end: rankuq {ours:.3f} s, ir-measures {theirs:.3f} s")
        print(f"  ratio {theirs / ours:.1f}× (bar: 20×), largest difference {difference:.1e} (bar: 1e-9)")


if __name__ == "__main__":
    main()
