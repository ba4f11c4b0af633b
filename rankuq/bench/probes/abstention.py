"""Abstention (Gisserot-Boukhlef et al., 2024): does a confidence function know which rankings to withhold?

Protocol, fixed so results are exact. Abstention rates r ∈ {0, 0.1, …, 0.8}; at rate r the
mechanism abstains on the ⌊r·N⌋ queries of lowest confidence (ties: lower qid first) and its
performance P(r) is the mean metric over the other queries. The oracle abstains on the ⌊r·N⌋
queries of lowest metric value; random abstention keeps, in expectation, the mean over all
queries at every r. AUC is the trapezoid rule over r; nAUC = (AUC − AUC_random) /
(AUC_oracle − AUC_random): 1 is the oracle, 0 random, < 0 harmful. Metrics: AP, nDCG@10, RR.

Queries without a relevant candidate (every metric 0) and one-candidate queries (u_1-2
undefined) are left out, with a note. Data-driven confidences are fitted on a reference set:
``dev`` when given (another task's or shift's table makes this the domain-transfer study of
§5.4), else Gisserot-Boukhlef et al. (2024)'s protocol of 80/20 reference/test splits of the table
over ``splits``
seeds (seed, seed + 1, …), every confidence evaluated on the same test parts and averaged.

Metric keys: ``nAUC.<m>.<u>``, ``AUC.<m>.<u>``, ``AUC.<m>.oracle``, ``AUC.<m>.random``;
with a reference set also ``threshold.rate_MAE.<10|50|90>.<u>``,
``threshold.<m>_MAE.<10|50|90>.<u>`` (§5.3, m the first metric), ``break_even.<m>`` (§5.5:
the smallest reference size from which u_lin beats u_std; absent when it never stays above),
``break_even.<m>.largest`` (the largest reference size tried, so that an absent break-even reads
"> N") and ``nAUC.<m>.u_lin@<n>`` (u_lin fitted on n reference queries, n in CLAIM_SIZES below the
reference size: Table 5 / Fig. 4's sizes a claim cites). The curves, nAUC and the per-query inputs
are ``bench.probes.abstention_protocol``'s; threshold calibration and the reference-set size, with
TARGET_RATES, REFERENCE_SIZES and CLAIM_SIZES, ``bench.probes.abstention_studies``'.

Per-query parts (``bench.statistics.parts``), when the test set is the whole table, each query once: with
``dev``, or with reference-free confidences alone and no ``dev``. ``nAUC.<m>.<u>`` and
``nAUC.<m>.u_lin@<n>``: rows [test metric, test confidence], statistic ``normalised_auc``;
``threshold.<m>_MAE.<r>.<u>``: rows [kept, test metric, reference performance], statistic
``threshold_error``; ``threshold.rate_MAE.<r>.<u>``: rows [kept, target rate], statistic
``abstention_rate_error``. The 80/20 splits protocol (no ``dev``, a fitted confidence) emits no
parts: its metrics average over test parts in which a query appears several times (or, with one
split, only the test fifth). ``AUC.*`` and ``break_even.*`` have no parts. ``normalised_auc``
abstains on tied confidences in row order (the probe's rows are in qid order: lower qid first).
"""

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from rankuq.bench.plots import line_plot
from rankuq.bench.probes.abstention_protocol import (
    RATES,
    Assessed,
    Bounds,
    Part,
    all_assessed,
    area,
    assess_confidence,
    instances,
    metric_parts,
    usable,
)
from rankuq.bench.probes.abstention_studies import break_even, threshold_calibration
from rankuq.bench.probes.base import (
    PROBES,
    Draw,
    ProbeResult,
    ScoredLists,
    as_lists,
    key,
    merge,
    split_queries,
)
from rankuq.bench.probes.confidence import DATA_DRIVEN, REFERENCE_FREE, UNCERTAINTY, K, NotFittable
from rankuq.errors import RankuqError

ABSTENTION_METRICS = ("AP", "nDCG@10", "RR")
SPLITS = 5


@PROBES.register
def probe(
    predictions: pa.Table | ScoredLists,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    confidences: Sequence[str] | None = None,
    names: Sequence[str] = ABSTENTION_METRICS,
    splits: int = SPLITS,
    k: int = K,
) -> ProbeResult:
    """nAUC of each confidence function for each metric, plus threshold calibration and the
    reference-size break-even when there is a reference set (see the module docstring).

    ``confidences`` defaults to every reference-free and data-driven function, and the
    uncertainty-based ones for a stochastic ranker; without ``dev``, reference-free ones alone
    need no reference set and are scored on the whole table.
    """
    check_confidences(confidences or ())
    lists, notes = usable(as_lists(predictions))
    confidences = list(confidences or _defaults(lists))
    data = instances(lists, names, confidences, k)
    if dev is not None:
        reference, dev_notes = usable(as_lists(dev, "dev"))
        parts: list[Part] = [(instances(reference, names, confidences, k), data, seed)]
        notes += tuple(note.replace("abstention:", "abstention (dev):") for note in dev_notes)
    elif any(u in DATA_DRIVEN for u in confidences):
        if lists.length.size < 10:
            raise RankuqError(
                f"{lists.ranked.source}: 80/20 reference/test splits need 10 or more usable queries "
                f"(the table has {lists.length.size}); pass a dev table or reference-free confidences"
            )
        parts = []
        for split_seed in range(seed, seed + splits):
            ref, test = split_queries(lists.length.size, split_seed)
            parts.append((data.take(ref), data.take(test), split_seed))
    else:
        parts = [(None, data, seed)]
    assessed = {u: [assess_confidence(u, ref, test, names, s) for ref, test, s in parts] for u in confidences}
    # per-query parts where the one test part is every usable query (not with the 80/20 splits)
    qids = lists.qids if len(parts) == 1 and parts[0][1] is data else None
    results = [_normalised_aucs(parts, assessed, names, qids)]
    if parts[0][0] is not None:
        results.append(threshold_calibration(parts, assessed, names[0], qids))
        if {"u_lin", "u_std"} <= set(confidences):
            results.append(break_even(parts, names[0], qids))
    result = merge(results)
    return ProbeResult(result.metrics, result.curves, result.plots, notes + result.notes, result.parts)


def check_confidences(names: Sequence[str]) -> None:
    """Refuse a confidence function this probe does not have, listing those it has."""
    unknown = [u for u in names if u not in (*REFERENCE_FREE, *DATA_DRIVEN, *UNCERTAINTY)]
    if unknown:
        raise RankuqError(
            f"unknown confidence function '{unknown[0]}'; valid: reference-free {', '.join(REFERENCE_FREE)}; "
            f"fitted {', '.join(DATA_DRIVEN)}; for S > 1 draws {', '.join(UNCERTAINTY)}"
        )


def _defaults(lists: ScoredLists) -> list[str]:
    return [*REFERENCE_FREE, *DATA_DRIVEN, *(UNCERTAINTY if lists.samples is not None else ())]


def _normalised_aucs(
    parts: list[Part],
    assessed: dict[str, list[dict[str, Assessed | NotFittable]]],
    names: Sequence[str],
    qids: np.ndarray | None,
) -> ProbeResult:
    """nAUC (mean over the parts where it is defined) and AUC terms (mean over the parts) of
    each confidence and metric, and the mean performance–abstention curves; with ``qids`` (one
    part, its test set those queries) each nAUC's parts."""
    values, curves, notes, split = {}, {}, [], {}
    for metric in names:
        m, bounds = key(metric), [Bounds.of(test.metric[metric]) for _, test, _ in parts]
        curve = {"rate": np.array(RATES)}
        for u, per_part in assessed.items():
            found = [a[metric] for a in per_part]
            if not all_assessed(found):
                failed = [a for a in found if isinstance(a, NotFittable)]
                notes.append(f"abstention: {u} for {metric} left out: {failed[0]}")
                continue
            scores = [b.normalise(a.curve) for a, b in zip(found, bounds, strict=True)]
            defined = [s.value for s in scores if np.isfinite(s.value)]
            if defined:
                values[f"nAUC.{metric}.{u}"] = float(np.mean(defined))
                if qids is not None:
                    test, fitted = parts[0][1], found[0]
                    split[f"nAUC.{metric}.{u}"] = metric_parts(
                        qids, "normalised_auc", test.metric[metric], fitted.test
                    )
            values[f"AUC.{metric}.{u}"] = float(np.mean([s.auc for s in scores]))
            curve[u] = np.mean([a.curve for a in found], axis=0)
        values[f"AUC.{metric}.oracle"] = float(np.mean([area(b.oracle) for b in bounds]))
        values[f"AUC.{metric}.random"] = float(np.mean([area(b.random) for b in bounds]))
        if not any(name.startswith(f"nAUC.{metric}.") for name in values):
            notes.append(
                f"abstention: nAUC for {metric} is undefined: the oracle equals random abstention "
                f"(every test query has {metric} {bounds[0].random[0]:g}, e.g. a perfect ranker); left out"
            )
        curve["oracle"] = np.mean([b.oracle for b in bounds], axis=0)
        curve["random"] = np.mean([b.random for b in bounds], axis=0)
        curves[f"abstention.{m}"] = curve
    plots = {f"abstention_{key(n)}": _curve_plot(curves[f"abstention.{key(n)}"], n) for n in names}
    return ProbeResult(values, curves, plots, tuple(notes), split)


def _curve_plot(curve: dict[str, np.ndarray], metric: str) -> Draw:
    series = {u: (curve["rate"], y) for u, y in curve.items() if u != "rate"}
    return lambda path, subject: line_plot(
        series, path, xlabel="abstention rate", ylabel=f"mean {metric}", subject=subject
    )
