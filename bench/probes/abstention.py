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
reference size: Table 5 / Fig. 4's sizes a claim cites).

Per-query parts (``bench.probes.parts``), when the test set is the whole table, each query once: with
``dev``, or with reference-free confidences alone and no ``dev``. ``nAUC.<m>.<u>`` and
``nAUC.<m>.u_lin@<n>``: rows [test metric, test confidence], statistic ``normalised_auc``;
``threshold.<m>_MAE.<r>.<u>``: rows [kept, test metric, reference performance], statistic
``threshold_error``; ``threshold.rate_MAE.<r>.<u>``: rows [kept, target rate], statistic
``abstention_rate_error``. The 80/20 splits protocol (no ``dev``, a fitted confidence) emits no
parts: its metrics average over test parts in which a query appears several times (or, with one
split, only the test fifth). ``AUC.*`` and ``break_even.*`` have no parts. ``normalised_auc``
abstains on tied confidences in row order (the probe's rows are in qid order: lower qid first).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeGuard

import numpy as np
import pyarrow as pa

from rankuq.bench.plots import line_plot
from rankuq.bench.probes.base import PROBES, ProbeResult, ScoredLists, as_lists, key, merge, split_queries
from rankuq.bench.probes.confidence import (
    DATA_DRIVEN,
    REFERENCE_FREE,
    UNCERTAINTY,
    K,
    NotFittable,
    fit_confidence,
    free_confidence,
    sorted_scores,
)
from rankuq.bench.probes.parts import QueryParts, statistic
from rankuq.errors import RankuqError

RATES = tuple(i / 10 for i in range(9))
ABSTENTION_METRICS = ("AP", "nDCG@10", "RR")
TARGET_RATES = (10, 50, 90)  # percent, threshold calibration (§5.3)
REFERENCE_SIZES = (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
CLAIM_SIZES = (100, 500)  # u_lin's reference sizes reported as metrics (paper 002 Table 5, Fig. 4)
SPLITS = 5


def abstained(n_queries: int) -> np.ndarray:
    """⌊r·N⌋ for each rate of RATES, in integers (i·N // 10), so 0.3·10 is exactly 3."""
    return np.arange(len(RATES)) * n_queries // 10


def kept_means(ordered: np.ndarray) -> np.ndarray:
    """P(r) for each rate of RATES: the mean of ``ordered`` (metric values, first abstained
    first) without its first ⌊r·N⌋ values. Only which values precede each cut matters, so
    ``ordered`` may be partitioned at the cuts rather than sorted."""
    cuts = abstained(ordered.size)
    edges = np.unique(np.append(cuts, ordered.size))  # 0 = e_0 < e_1 < … < N
    prefix = np.concatenate([[0.0], np.cumsum(np.add.reduceat(ordered, edges[:-1]))])  # Σ below each edge
    return (prefix[-1] - prefix[np.searchsorted(edges, cuts)]) / (ordered.size - cuts)


def abstention_order(confidence: np.ndarray) -> np.ndarray:
    """Query indices, lowest confidence first, ties in query order (queries are sorted by qid,
    so lower qid first), partitioned at the cuts of every rate (enough for ``kept_means``)."""
    # complex numbers order by real part, then imaginary: (confidence, query index)
    return _partitioned(confidence + 1j * np.arange(confidence.size))


def performance_curve(metric: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """P(r) abstaining on the lowest confidences first (``abstention_order``)."""
    return kept_means(metric[abstention_order(confidence)])


def oracle_curve(metric: np.ndarray) -> np.ndarray:
    """P(r) of the oracle, which abstains on the lowest metric values first."""
    return kept_means(metric[_partitioned(metric)])


def _partitioned(keys: np.ndarray) -> np.ndarray:
    """Indices ordering ``keys`` so that the ⌊r·N⌋ smallest come first for every rate: a
    partition at the cuts, O(N), instead of a full sort."""
    cuts = abstained(keys.size)
    cuts = np.unique(cuts[(cuts > 0) & (cuts < keys.size)])
    return np.argpartition(keys, cuts) if cuts.size else np.arange(keys.size)


def area(curve: np.ndarray) -> float:
    """Area under a performance–abstention curve, trapezoid rule over RATES."""
    return float(np.trapezoid(curve, RATES))


@dataclass(frozen=True)
class NormalisedAUC:
    """nAUC and its terms; ``value`` is NaN when the oracle equals random (no query is better
    than another, e.g. a perfect ranker), where nAUC is undefined."""

    value: float
    auc: float
    oracle: float
    random: float


@dataclass(frozen=True)
class Bounds:
    """The oracle's and random abstention's curves over a set of queries' metric values."""

    oracle: np.ndarray
    random: np.ndarray

    @classmethod
    def of(cls, metric: np.ndarray) -> "Bounds":
        """Random abstention keeps, in expectation, the mean at every rate."""
        return cls(oracle_curve(metric), np.full(len(RATES), metric.mean()))

    def normalise(self, curve: np.ndarray) -> NormalisedAUC:
        """nAUC = (AUC − AUC_random) / (AUC_oracle − AUC_random) (Gisserot-Boukhlef et al., 2024 eq. 8)."""
        auc, oracle, random = area(curve), area(self.oracle), area(self.random)
        return NormalisedAUC(
            (auc - random) / (oracle - random) if oracle > random else np.nan, auc, oracle, random
        )


def normalised_auc(metric: np.ndarray, confidence: np.ndarray) -> NormalisedAUC:
    """nAUC of abstaining by ``confidence`` on queries with the given metric values."""
    return Bounds.of(metric).normalise(performance_curve(metric, confidence))


def _normalised_auc(rows: np.ndarray) -> float:
    """Statistic ``normalised_auc``: rows [metric value, confidence] → ``normalised_auc(…).value``
    (NaN where the oracle equals random), ties abstained in row order."""
    return normalised_auc(rows[:, 0], rows[:, 1]).value


_normalised_auc.__name__ = "normalised_auc"  # the registered name; the function above keeps its own
statistic(_normalised_auc)


@statistic
def threshold_error(rows: np.ndarray) -> float:
    """Rows [kept (0/1), metric value, reference performance (the same in every row)] → |reference
    performance − mean metric of the kept queries|; NaN when none is kept."""
    kept = rows[:, 0] > 0
    return float(abs(rows[0, 2] - rows[kept, 1].mean())) if kept.any() else np.nan


@statistic
def abstention_rate_error(rows: np.ndarray) -> float:
    """Rows [kept (0/1), target abstention rate (the same in every row)] → |target − achieved rate|."""
    return float(abs(rows[0, 1] - (1 - rows[:, 0].mean())))


def _parts(qids: np.ndarray, name: str, *columns: np.ndarray | float) -> QueryParts:
    """Parts of one metric: a row per query of the given columns (a number fills its column)."""
    rows = np.column_stack([np.broadcast_to(np.asarray(c, dtype=np.float64), qids.shape) for c in columns])
    return QueryParts(qids, rows, name)


@dataclass(frozen=True)
class Instances:
    """The protocol's per-query inputs: metric values, the confidences that need no fitting and
    (when a learner is fitted) the sorted scores it reads."""

    metric: dict[str, np.ndarray]
    free: dict[str, np.ndarray]
    features: np.ndarray | None

    def take(self, index: np.ndarray) -> "Instances":
        return Instances(
            {m: v[index] for m, v in self.metric.items()},
            {u: v[index] for u, v in self.free.items()},
            None if self.features is None else self.features[index],
        )


def instances(lists: ScoredLists, names: Sequence[str], confidences: Sequence[str], k: int = K) -> Instances:
    """``Instances`` of every query of ``lists``."""
    fitted = any(u in DATA_DRIVEN for u in confidences)
    return Instances(
        lists.per_query(names),
        {u: free_confidence(lists, u) for u in confidences if u not in DATA_DRIVEN},
        sorted_scores(lists, k) if fitted else None,
    )


def usable(lists: ScoredLists) -> tuple[ScoredLists, tuple[str, ...]]:
    """The queries the protocol scores: a relevant candidate and at least two candidates."""
    relevant, multiple = lists.ranked.n_relevant > 0, lists.length >= 2
    kept = relevant & multiple
    if kept.sum() < 2:
        raise RankuqError(
            f"{lists.ranked.source}: abstention needs 2 or more queries with a relevant candidate "
            f"and 2 or more candidates; the table has {kept.sum()}"
        )
    notes = tuple(
        f"abstention: {n} {what} left out"
        for n, what in (
            ((~relevant).sum(), "queries without a relevant candidate"),
            ((relevant & ~multiple).sum(), "one-candidate queries"),
        )
        if n
    )
    return (lists if kept.all() else lists.select(kept)), notes


class Assessed(NamedTuple):
    """One confidence function on one part: its reference and test values and the test curve."""

    reference: np.ndarray | None
    test: np.ndarray
    curve: np.ndarray


def assess(
    u: str, reference: Instances | None, test: Instances, names: Sequence[str], seed: int
) -> dict[str, Assessed | NotFittable]:
    """Confidence ``u`` on a (reference, test) part, per metric: a data-driven one is fitted on
    the reference set to predict that metric (``seed`` seeds the learner); one without fitting
    is ordered once for every metric."""
    if u not in DATA_DRIVEN:
        order = abstention_order(test.free[u])
        mine = None if reference is None else reference.free[u]
        return {m: Assessed(mine, test.free[u], kept_means(test.metric[m][order])) for m in names}
    # run() fits data-driven confidences only on parts with a reference set, and gives every
    # Instances its sorted scores when one is data-driven
    assert reference is not None and reference.features is not None and test.features is not None
    out: dict[str, Assessed | NotFittable] = {}
    for m in names:
        try:
            fitted = fit_confidence(u, reference.features, reference.metric[m], seed)
        except NotFittable as reason:
            out[m] = reason
            continue
        values = fitted(test.features)
        out[m] = Assessed(fitted(reference.features), values, performance_curve(test.metric[m], values))
    return out


Part = tuple[Instances | None, Instances, int]  # (reference, test, seed of the fits)


def _all_assessed(found: list[Assessed | NotFittable]) -> TypeGuard[list[Assessed]]:
    return not any(isinstance(a, NotFittable) for a in found)


def _reference(part: Part) -> tuple[Instances, np.ndarray]:
    """A part's reference set and its sorted scores (callers fit u_lin: the part has both)."""
    ref = part[0]
    assert ref is not None and ref.features is not None
    return ref, ref.features


@PROBES.register
def run(
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
    assessed = {u: [assess(u, ref, test, names, s) for ref, test, s in parts] for u in confidences}
    # per-query parts where the one test part is every usable query (not with the 80/20 splits)
    qids = lists.qids if len(parts) == 1 and parts[0][1] is data else None
    results = [_normalised_aucs(parts, assessed, names, qids)]
    if parts[0][0] is not None:
        results.append(_threshold_calibration(parts, assessed, names[0], qids))
        if {"u_lin", "u_std"} <= set(confidences):
            results.append(_break_even(parts, names[0], qids))
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
            if not _all_assessed(found):
                failed = [a for a in found if isinstance(a, NotFittable)]
                notes.append(f"abstention: {u} for {metric} left out: {failed[0]}")
                continue
            scores = [b.normalise(a.curve) for a, b in zip(found, bounds, strict=True)]
            defined = [s.value for s in scores if np.isfinite(s.value)]
            if defined:
                values[f"nAUC.{metric}.{u}"] = float(np.mean(defined))
                if qids is not None:
                    test, fitted = parts[0][1], found[0]
                    split[f"nAUC.{metric}.{u}"] = _parts(
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


def _threshold_calibration(
    parts: list[Part],
    assessed: dict[str, list[dict[str, Assessed | NotFittable]]],
    metric: str,
    qids: np.ndarray | None,
) -> ProbeResult:
    """Paper 002 §5.3: a threshold τ set on the reference set for a target abstention rate r
    (τ = the ⌊r·N_ref⌋-th lowest reference confidence; abstain iff u ≤ τ) and the reference
    performance above it, checked on the test set: MAE over the parts of |r − achieved rate| and
    of |reference − achieved performance| (over the parts where both keep a query); with ``qids``
    (one part) their parts: which test queries are kept, beside the target or the reference
    performance."""
    values, split = {}, {}
    for u, per_part in assessed.items():
        found = [a[metric] for a in per_part]
        if not _all_assessed(found):
            continue
        for target in TARGET_RATES:
            rate_errors, metric_errors = [], []
            for (ref, test, _), a in zip(parts, found, strict=True):
                assert ref is not None and a.reference is not None  # called with a reference set
                abstained = target * a.reference.size // 100
                tau = np.sort(a.reference)[abstained - 1] if abstained else -np.inf
                ref_kept, kept = a.reference > tau, a.test > tau
                rate_errors.append(abs(target / 100 - (1 - kept.mean())))
                if ref_kept.any() and kept.any():
                    performance = ref.metric[metric][ref_kept].mean()
                    metric_errors.append(abs(performance - test.metric[metric][kept].mean()))
            rate_key, metric_key = f"threshold.rate_MAE.{target}.{u}", f"threshold.{metric}_MAE.{target}.{u}"
            values[rate_key] = float(np.mean(rate_errors))
            if qids is not None:  # one part: kept and performance are its
                split[rate_key] = _parts(qids, "abstention_rate_error", kept, target / 100)
            if metric_errors:
                values[metric_key] = float(np.mean(metric_errors))
                if qids is not None:
                    split[metric_key] = _parts(
                        qids, "threshold_error", kept, test.metric[metric], performance
                    )
    return ProbeResult(values, parts=split)


def _break_even(parts: list[Part], metric: str, qids: np.ndarray | None) -> ProbeResult:
    """Paper 002 §5.5: nAUC of u_lin fitted on the first n reference queries of a seeded
    permutation, for n on REFERENCE_SIZES (and the whole reference set), against u_std on the
    same test parts; the break-even is the smallest n from which u_lin stays above u_std, and
    ``largest`` the whole reference set's size (the largest n tried). u_lin's nAUC at each n of
    CLAIM_SIZES below that size is a metric too (with ``qids``, one part, with its parts)."""
    size = min(len(_reference(part)[1]) for part in parts)
    sizes = [n for n in REFERENCE_SIZES if n < size] + [size]
    bounds = [Bounds.of(test.metric[metric]) for _, test, _ in parts]
    standard = np.mean(
        [
            b.normalise(performance_curve(t.metric[metric], t.free["u_std"])).value
            for (_, t, _), b in zip(parts, bounds, strict=True)
        ]
    )
    claimed = [n for n in CLAIM_SIZES if n < size]
    fits = {n: [_subset_fit(part, n, metric) for part in parts] for n in dict.fromkeys([*sizes, *claimed])}
    nauc = {
        n: np.mean([b.normalise(a.curve).value for a, b in zip(fits[n], bounds, strict=True)]) for n in fits
    }
    linear = np.array([nauc[n] for n in sizes])
    curve = {"size": np.array(sizes), "u_lin": linear, "u_std": np.full(len(sizes), standard)}
    plot = {
        f"reference_size_{key(metric)}": lambda path: line_plot(
            {u: (curve["size"], curve[u]) for u in ("u_lin", "u_std")},
            path,
            xlabel="reference set size",
            ylabel=f"nAUC ({metric})",
            log_x=True,
        )
    }
    values, split = {f"break_even.{metric}.largest": float(size)}, {}
    for n in claimed:
        if np.isfinite(nauc[n]):
            values[f"nAUC.{metric}.u_lin@{n}"] = float(nauc[n])
            if qids is not None:
                test = parts[0][1]
                split[f"nAUC.{metric}.u_lin@{n}"] = _parts(
                    qids, "normalised_auc", test.metric[metric], fits[n][0].test
                )
    beaten = [n for i, n in enumerate(sizes) if np.all(linear[i:] > standard)]
    if not beaten:
        note = f"abstention: u_lin never stays above u_std for {metric} up to {size} reference queries"
        return ProbeResult(values, {"reference_size": curve}, plot, (note,), split)
    values[f"break_even.{metric}"] = float(beaten[0])
    return ProbeResult(values, {"reference_size": curve}, plot, parts=split)


def _subset_fit(part: Part, n: int, metric: str) -> Assessed:
    """u_lin fitted on n reference queries drawn with the part's seed, on the part's test set."""
    (ref, features), (_, test, seed) = _reference(part), part
    subset = ref.take(np.sort(np.random.default_rng(seed).permutation(len(features))[:n]))
    fitted = assess("u_lin", subset, test, [metric], seed)[metric]
    assert isinstance(fitted, Assessed)  # a ridge is fitted on any reference set
    return fitted


def _curve_plot(curve: dict[str, np.ndarray], metric: str) -> Callable[[Path], Path]:
    series = {u: (curve["rate"], y) for u, y in curve.items() if u != "rate"}
    return lambda path: line_plot(series, path, xlabel="abstention rate", ylabel=f"mean {metric}")
