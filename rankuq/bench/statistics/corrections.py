"""Multiple-comparison corrections of a family of p-values, in numpy alone: the leaderboard adjusts
every board it renders, and scipy.stats took a second to import for a five-line step."""

import numpy as np

from rankuq.errors import RankuqError

CORRECTIONS = ("bh", "holm")


def corrected(p_values: np.ndarray, method: str) -> np.ndarray:
    """p-values adjusted over their family; NaN (no test) stays NaN and is not counted. ``bh``:
    Benjamini–Hochberg (false discovery rate; Benjamini & Hochberg, 1995), the k-th smallest of m
    p-values times m / k, made non-decreasing from the largest down and capped at 1, as
    ``scipy.stats.false_discovery_control`` (tested against it); ``holm``: Holm's step-down
    (family-wise error), the k-th smallest times m − k + 1, made non-decreasing and capped at 1
    (Holm, 1979; scipy has no Holm, statsmodels is not a dependency)."""
    if method not in CORRECTIONS:
        raise RankuqError(f"unknown correction '{method}'; valid: {', '.join(CORRECTIONS)}")
    values = np.asarray(p_values, np.float64)
    out = values.copy()
    tested = ~np.isnan(values)
    found = values[tested]
    if not found.size:
        return out
    order = np.argsort(found, kind="stable")
    rank = np.arange(1, found.size + 1)
    if method == "bh":
        steps = np.minimum.accumulate((found.size / rank * found[order])[::-1])[::-1]
    else:
        steps = np.maximum.accumulate((found.size - rank + 1) * found[order])
    adjusted = np.empty_like(found)
    adjusted[order] = np.minimum(steps, 1.0)
    out[tested] = adjusted
    return out
