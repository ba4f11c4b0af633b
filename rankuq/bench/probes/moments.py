"""Score moments against the score (Cohen et al., 2021, §5.2 and Figure 2): how a stochastic ranker's
uncertainty about a candidate varies with its relevance score.

Cohen et al. plot each document's mean score μ against the variance σ² and the skewness δ of its
sampled scores (BERT-L2 and BERT-L4 with last-layer MC dropout, TREC DL 2019): "the model is most
certain about highly relevant documents, and a non-linear increase in uncertainty as documents move
further away from the query", and "the top most relevant documents are highly skewed with low
variance within the range of 0 to −0.1 relevance score with the majority of its mass on the right".
Their scores are log-probabilities of relevance (the top documents near 0), so the moments here are
those of the log of each draw's probability: σ² falls and δ turns negative as μ rises.

The figure gives no number; the probe measures the direction as a rank correlation: per query with
3 or more candidates, Spearman's ρ over its candidates between μ and σ² (``moments.rho.variance``)
and between μ and δ (``moments.rho.skew``), averaged over the queries where it is defined (a query
whose candidates all share one σ², or one δ, has no ρ). Skewness is g1 = m3 / m2^1.5 (0 when the
draws are equal). A deterministic ranker (S = 1) has no moments: the probe reports none.

Parts (``bench.statistics.parts``): each key's per-query ρ over the queries where it is defined,
statistic ``mean``.
"""

import numpy as np
import pyarrow as pa
from scipy import stats

from rankuq.bench.probes.base import PROBES, ProbeResult, ScoredLists, as_lists
from rankuq.bench.statistics.parts import per_query

SMALLEST = 1e-12  # a draw's probability is clipped here before its log (a probability of exactly 0)
MIN_CANDIDATES = 3  # a rank correlation over 2 candidates is ±1 by construction


def log_moments(lists: ScoredLists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[Q, L] each: mean, variance (population) and skewness g1 of the log of each candidate's draws."""
    assert lists.samples is not None, "moments need draws (S > 1)"  # as the probe checks first
    draws = np.log(np.clip(lists.samples.astype(np.float64), SMALLEST, 1.0))
    mean = draws.mean(axis=2)
    centred = draws - mean[..., None]
    m2, m3 = (centred**2).mean(axis=2), (centred**3).mean(axis=2)
    skew = np.divide(m3, m2**1.5, out=np.zeros_like(m2), where=m2 > 0)
    return mean, m2, skew


def spearman_by_row(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """[Q]: Spearman's ρ between ``a`` and ``b`` over each row's ``mask``ed entries (ties: average
    ranks), NaN where a row has fewer than MIN_CANDIDATES entries or one of them is constant."""
    # Entries outside the mask rank above every entry inside it, so the ranks inside are 1..n.
    ranks = [stats.rankdata(np.where(mask, x, np.inf), axis=1) for x in (a, b)]
    count = mask.sum(axis=1)
    centred = [
        np.where(mask, r - (r * mask).sum(axis=1, keepdims=True) / np.maximum(count, 1)[:, None], 0.0)
        for r in ranks
    ]
    covariance = (centred[0] * centred[1]).sum(axis=1)
    spread = np.sqrt((centred[0] ** 2).sum(axis=1) * (centred[1] ** 2).sum(axis=1))
    rho = np.divide(covariance, spread, out=np.full(len(a), np.nan), where=spread > 0)
    return np.where(count >= MIN_CANDIDATES, rho, np.nan)


@PROBES.register
def probe(
    predictions: pa.Table | ScoredLists, *, dev: pa.Table | ScoredLists | None = None, seed: int = 0
) -> ProbeResult:
    """ρ(μ, σ²) and ρ(μ, δ) of the log-probability draws, averaged over queries; ``dev`` and
    ``seed`` are unused (nothing is fitted)."""
    lists = as_lists(predictions)
    if lists.samples is None:
        return ProbeResult({}, notes=("moments: one draw per candidate (S = 1), so no moments to relate",))
    mean, variance, skew = log_moments(lists)
    values: dict[str, float] = {}
    parts = {}
    notes: list[str] = []
    for name, moment in (("variance", variance), ("skew", skew)):
        rho = spearman_by_row(mean, moment, lists.mask)
        defined = ~np.isnan(rho)
        if not defined.any():
            notes.append(f"moments: ρ(μ, {name}) is defined in no query (every list's {name} is constant)")
            continue
        values[f"moments.rho.{name}"] = float(rho[defined].mean())
        parts[f"moments.rho.{name}"] = per_query(lists.qids[defined], rho[defined])
    return ProbeResult(values, notes=tuple(notes), parts=parts)
