"""Risk-aware ranking from the draws: RA (Penha & Hauff, 2021 §3.2.4, b chosen on dev, Figure 3) and
CVaR_α, optimistic and pessimistic (Cohen et al., 2021 §3.5).

Two covariance terms (``covariance``): ``all``, the authors' public code of Penha & Hauff, 2021 (each
candidate's covariance summed over every other candidate of its list, one score per candidate,
then sorted), the default; ``above``, the portfolio greedy of Wang & Zhu (2009) that Penha & Hauff, 2021's
formula writes (summed over the candidates already ranked above), whose first pick ignores
covariance.

Two b grids. ``B_GRID``, where RA's b is chosen on dev: risk aversion (b ≥ 0) in [0, 1], as Penha &
Hauff, 2021 §5.2 choose it on dev (b = 0 is the mean ranking; Figure 3 shows b ≥ 0 only). The paper
names no grid: {0, 0.1, …, 1} with 0.05 and 0.25 (the b at which §5.2's MSDialog → UDC_DSTC8 curve
peaks). ``NEGATIVE_B_GRID``: risk predilection (b < 0), which §5.2 tried apart and found
significantly worse than b = 0 in every condition; its b is chosen on dev among those alone, so that
claim can be judged (``RA.neg.*``).

Metric keys (m ∈ R@1, AP, RR, nDCG@10): ``RA.b`` (chosen on dev among ``b_grid``, or given),
``RA.<m>`` and ``RA.<m>.p_value`` (paired t-test per query against the mean ranking, b = 0),
``CVaR.optimistic.<m>``, ``CVaR.pessimistic.<m>`` and their ``.p_value``; with a dev table also
``RA.neg.b`` (chosen on dev among ``negative_b_grid``, the same tie rule), ``RA.neg.<m>`` and
``RA.neg.<m>.p_value`` (against the mean ranking). Without a dev table (and no given b) only CVaR and
the curve of R@1 against b are reported; the curve ``RA`` runs over both grids (and a given b). A
deterministic ranker (S = 1) has no variance: every RA and CVaR ranking is its mean ranking, and the
values say so.

Parts (``bench.statistics.parts``, statistic ``mean``, one row per query with a relevant candidate, the
probe's queries): ``RA.<m>`` (the chosen b's per-query values), ``RA.neg.<m>`` (the chosen negative
b's) and ``CVaR.<view>.<m>`` as their metrics, and ``RA.mean.<m>``, parts only (no metric key): the
mean ranking's per-query values on the same queries, the side RA and CVaR are compared with (their
``.p_value``), so a resampling of the queries compares both sides on the same draw. ``RA.mean.<m>``
is reported with or without a dev table.
"""

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

import numpy as np
import pyarrow as pa

from rankuq.bench.plots import line_plot
from rankuq.bench.probes.base import PROBES, Draw, ProbeResult, ScoredLists, as_lists, key
from rankuq.bench.statistics.paired import paired_t
from rankuq.bench.statistics.parts import QueryParts, per_query
from rankuq.errors import RankuqError

# risk aversion in the paper's [0, 1]: the authors' {0, 0.1, …, 1}, and 0.05 and 0.25 (§5.2's peak)
B_GRID: tuple[float, ...] = tuple(sorted({0.05, 0.25} | {i / 10 for i in range(11)}))
# risk predilection (b < 0), chosen on dev apart from B_GRID (``RA.neg.*``)
NEGATIVE_B_GRID: tuple[float, ...] = (-1.0, -0.5, -0.25, -0.1, -0.05)
Covariance = Literal["all", "above"]
COVARIANCES: tuple[str, ...] = get_args(Covariance)
ALPHA = 0.5
RISK_METRICS = ("R@1", "AP", "RR", "nDCG@10")
_CELLS = 1 << 22  # covariance entries per block of queries (32 MiB of float64)


def risk_aware_orders(
    lists: ScoredLists, bs: Sequence[float], covariance: Covariance = "all"
) -> dict[float, np.ndarray]:
    """The RA-BERT ranking (Penha & Hauff, 2021 §3.2.4) of every query for each risk aversion b.

    Candidate r scores E[R_r] − b·var[R_r] − 2b·Σ cov[R_r, R_i], E being prob_mean and var, cov
    the population (ddof = 0) moments of the S draws, draw t of each candidate paired. With
    ``covariance="all"`` (the authors' code) the sum runs over every other candidate of the list
    and the list is sorted by that score. With ``"above"`` (portfolio ranking, Wang & Zhu 2009)
    rank n greedily gets the remaining candidate maximising the score summed over the n − 1
    candidates already ranked above it. Ties go to the earlier candidate of the mean ranking, so
    b = 0 gives the mean ranking exactly. Returns [Q, L] column indices into ``lists``'
    rank-order matrices, best first; padding keeps its place (``all``: goes last, where it is).
    """
    if covariance not in COVARIANCES:
        raise RankuqError(f"risk.covariance must be one of {', '.join(COVARIANCES)}, got {covariance!r}")
    identity = np.broadcast_to(np.arange(lists.scores.shape[1]), lists.scores.shape)
    if lists.samples is None:  # no variance: every b gives the mean ranking
        return {b: identity for b in bs}
    orders = {b: np.array(identity) for b in bs}
    width = lists.scores.shape[1]
    step = max(1, _CELLS // (width * width))
    for start in range(0, lists.length.size, step):
        block = slice(start, start + step)
        draws = lists.samples[block].astype(np.float64)
        centred = draws - draws.mean(axis=2, keepdims=True)  # padding: all-zero draws, zero moments
        if covariance == "all":
            variance = (centred**2).mean(axis=2)
            # Σ_{i≠r} cov[R_r, R_i] = cov[R_r, Σ_i R_i] − var[R_r]: no [L, L] matrix needed
            others = np.einsum("qis,qs->qi", centred, centred.sum(axis=1)) / draws.shape[2] - variance
            for b in bs:
                score = lists.scores[block] - b * variance - 2 * b * others
                orders[b][block] = _descending(lists.mask[block], score)
            continue
        matrix = np.einsum("qis,qjs->qij", centred, centred) / draws.shape[2]
        for b in bs:
            orders[b][block] = _greedy(lists.scores[block], matrix, lists.mask[block], b)
    return orders


def risk_aware_mean(lists: ScoredLists, b: float, name: str, covariance: Covariance = "all") -> float:
    """Mean ``name`` over the queries of ``lists`` ranked by RA with risk aversion ``b``."""
    return float(lists.per_query([name], risk_aware_orders(lists, [b], covariance)[b])[name].mean())


def _greedy(mean: np.ndarray, covariance: np.ndarray, mask: np.ndarray, b: float) -> np.ndarray:
    queries = np.arange(mean.shape[0])
    order = np.tile(np.arange(mean.shape[1]), (mean.shape[0], 1))
    remaining = mask.copy()
    base = mean - b * np.diagonal(covariance, axis1=1, axis2=2)
    above = np.zeros_like(mean)  # Σ cov with the candidates ranked so far
    for n in range(mean.shape[1]):
        active = queries[remaining.any(axis=1)]  # queries with candidates left to rank
        pick = np.where(remaining, base - 2 * b * above, -np.inf)[active].argmax(axis=1)
        order[active, n] = pick
        remaining[active, pick] = False
        above[active] += covariance[active, pick]
    return order


def cvar(lists: ScoredLists, alpha: float = ALPHA, optimistic: bool = True) -> np.ndarray:
    """CVaR_α of each candidate's draws (Cohen et al., 2021 §3.5): the mean of the m = S − ⌊α·S⌋ highest
    draws (optimistic, E[S | S ≥ F⁻¹(α)]) or lowest draws (pessimistic); α = 0 is the mean.
    With one draw it is prob_mean. [Q, L], like ``lists.scores``."""
    if not 0 <= alpha < 1:
        raise RankuqError(f"CVaR alpha must be in [0, 1), got {alpha}")
    if lists.samples is None:
        return lists.scores
    n = lists.n_samples
    tail = n - int(np.floor(alpha * n + 1e-9))  # + 1e-9: 0.7·10 is 7.000000000000001
    draws = np.sort(lists.samples, axis=2)
    return np.asarray(
        (draws[..., n - tail :] if optimistic else draws[..., :tail]).mean(axis=2, dtype=np.float64)
    )


def order_by(lists: ScoredLists, values: np.ndarray) -> np.ndarray:
    """Column indices ranking each query by ``values`` descending; ties keep the mean ranking's
    order, padding goes last."""
    return _descending(lists.mask, values)


def _descending(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.argsort(-np.where(mask, values, -np.inf), axis=1, kind="stable")


@PROBES.register
def probe(
    predictions: pa.Table | ScoredLists,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    b_grid: Sequence[float] = B_GRID,
    negative_b_grid: Sequence[float] = NEGATIVE_B_GRID,
    alpha: float = ALPHA,
    names: Sequence[str] = RISK_METRICS,
    select_by: str = "R@1",
    b: float | None = None,
    covariance: Covariance = "all",
) -> ProbeResult:
    """RA with b chosen on ``dev`` among ``b_grid`` (``choose_b``), or the given ``b`` (searched
    elsewhere), reported on ``predictions``; with ``dev``, also RA with b chosen there among
    ``negative_b_grid`` (every b < 0; empty: no ``RA.neg.*``); the curve of ``select_by`` against
    every b on both; CVaR± rankings. ``covariance``: ``all`` (the authors' code) or ``above`` (the
    greedy), see ``risk_aware_orders``. Over the queries with a relevant candidate; ``seed`` is unused."""
    aversion = sorted(set(map(float, b_grid)))
    predilection = sorted(set(map(float, negative_b_grid)))
    if any(value >= 0 for value in predilection):
        raise RankuqError(f"risk.negative_b_grid must hold b < 0 only, got {predilection}")
    grid = sorted(set(aversion) | set(predilection) | ({float(b)} if b is not None else set()))
    names = list(dict.fromkeys([select_by, *names]))
    lists = as_lists(predictions).with_relevant()
    mean_ranking = lists.per_query(names)
    orders = risk_aware_orders(lists, grid, covariance)
    test = {b: lists.per_query(names, order) for b, order in orders.items()}
    curve = {"b": np.array(grid), key(select_by): np.array([test[b][select_by].mean() for b in grid])}
    values: dict[str, float] = {}
    notes: tuple[str, ...] = ()
    chosen = {"RA": b}
    parts = _parts("RA.mean", lists.qids, mean_ranking)
    if dev is not None:
        dev_lists = as_lists(dev, "dev").with_relevant()
        dev_orders = risk_aware_orders(dev_lists, grid, covariance)
        dev_curve = np.array(
            [dev_lists.per_query([select_by], dev_orders[value])[select_by].mean() for value in grid]
        )
        curve[f"dev_{key(select_by)}"] = dev_curve
        on_dev = dict(zip(grid, dev_curve.tolist(), strict=True))
        if b is None:
            chosen["RA"] = choose_b({value: on_dev[value] for value in aversion})
        if predilection:
            chosen["RA.neg"] = choose_b({value: on_dev[value] for value in predilection})
    if chosen["RA"] is None:
        notes = ("risk: no dev table, so b is not chosen; RA reported as the curve of b only",)
    for prefix, value in chosen.items():
        if value is None:
            continue
        values[f"{prefix}.b"] = float(value)
        values |= _compared(prefix, test[float(value)], mean_ranking)
        parts |= _parts(prefix, lists.qids, test[float(value)])
    for view, optimistic in (("optimistic", True), ("pessimistic", False)):
        order = order_by(lists, cvar(lists, alpha, optimistic))
        ranked = lists.per_query(names, order)
        values |= _compared(f"CVaR.{view}", ranked, mean_ranking)
        parts |= _parts(f"CVaR.{view}", lists.qids, ranked)
    series = {"test": (curve["b"], curve[key(select_by)])}
    if dev is not None:
        series["dev"] = (curve["b"], curve[f"dev_{key(select_by)}"])
    return ProbeResult(
        values,
        curves={"RA": curve},
        plots={} if lists.samples is None else {"risk_aversion": _curve_plot(series, select_by)},
        notes=notes,
        parts=parts,
    )


def choose_b(dev_scores: Mapping[float, float]) -> float:
    """The b with the best dev score; on ties the one nearest 0 (nearest the mean ranking), then the
    smaller."""
    best = max(dev_scores.values())
    return min((value for value, score in dev_scores.items() if score == best), key=lambda v: (abs(v), v))


def _parts(prefix: str, qids: np.ndarray, values: dict[str, np.ndarray]) -> dict[str, QueryParts]:
    """Each metric's per-query values as parts of its mean, under ``<prefix>.<metric>``."""
    return {f"{prefix}.{name}": per_query(qids, value) for name, value in values.items()}


def _compared(
    prefix: str, values: dict[str, np.ndarray], mean_ranking: dict[str, np.ndarray]
) -> dict[str, float]:
    """Mean of each metric and the p-value of its paired t-test against the mean ranking."""
    out = {}
    for name, value in values.items():
        out[f"{prefix}.{name}"] = float(value.mean())
        out[f"{prefix}.{name}.p_value"] = paired_t(value, mean_ranking[name]).p
    return out


def _curve_plot(series: dict[str, tuple[np.ndarray, np.ndarray]], metric: str) -> Draw:
    """The RA curve's plot, drawn for rankers with several draws only: with one, every b ranks
    alike and the curve is a flat line."""
    return lambda path, subject: line_plot(
        series, path, xlabel="risk aversion b", ylabel=metric, title="RA ranking", subject=subject
    )
