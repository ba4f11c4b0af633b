"""Paper 002's studies beside nAUC, run by the abstention probe when there is a reference set:
threshold calibration (§5.3: ``threshold_calibration``) and the reference-set size at which a fitted
u_lin beats u_std (§5.5: ``break_even``); the metric keys are listed in ``bench.probes.abstention``.
"""

import numpy as np

from rankuq.bench.plots import line_plot
from rankuq.bench.probes.abstention_protocol import (
    Assessed,
    Bounds,
    Instances,
    Part,
    all_assessed,
    assess_confidence,
    metric_parts,
    performance_curve,
)
from rankuq.bench.probes.base import ProbeResult, key
from rankuq.bench.probes.confidence import NotFittable
from rankuq.bench.statistics.parts import statistic

TARGET_RATES = (10, 50, 90)  # percent, threshold calibration (§5.3)
REFERENCE_SIZES = (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
CLAIM_SIZES = (100, 500)  # u_lin's reference sizes reported as metrics (paper 002 Table 5, Fig. 4)


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


def _reference(part: Part) -> tuple[Instances, np.ndarray]:
    """A part's reference set and its sorted scores (callers fit u_lin: the part has both)."""
    ref = part[0]
    assert ref is not None and ref.features is not None
    return ref, ref.features


def threshold_calibration(
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
        if not all_assessed(found):
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
                split[rate_key] = metric_parts(qids, "abstention_rate_error", kept, target / 100)
            if metric_errors:
                values[metric_key] = float(np.mean(metric_errors))
                if qids is not None:
                    split[metric_key] = metric_parts(
                        qids, "threshold_error", kept, test.metric[metric], performance
                    )
    return ProbeResult(values, parts=split)


def break_even(parts: list[Part], metric: str, qids: np.ndarray | None) -> ProbeResult:
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
        f"reference_size_{key(metric)}": lambda path, subject: line_plot(
            {u: (curve["size"], curve[u]) for u in ("u_lin", "u_std")},
            path,
            xlabel="reference set size",
            ylabel=f"nAUC ({metric})",
            log_x=True,
            subject=subject,
        )
    }
    values, split = {f"break_even.{metric}.largest": float(size)}, {}
    for n in claimed:
        if np.isfinite(nauc[n]):
            values[f"nAUC.{metric}.u_lin@{n}"] = float(nauc[n])
            if qids is not None:
                test = parts[0][1]
                split[f"nAUC.{metric}.u_lin@{n}"] = metric_parts(
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
    fitted = assess_confidence("u_lin", subset, test, [metric], seed)[metric]
    assert isinstance(fitted, Assessed)  # a ridge is fitted on any reference set
    return fitted
