"""The leaderboard: one row per (condition, method), mean ± std over seeds and the p-value against the
baseline method, as Markdown and CSV."""

import os
from pathlib import Path

import numpy as np
import pandas as pd

RANKING_METRICS = ("R@1", "R@5", "P@1", "AP", "RR", "nDCG@10")
LEADERBOARD_METRICS = (*RANKING_METRICS, "ECE", "ERCE", "RA R@1", "nAUC AP u_max")


def leaderboard(
    results: pd.DataFrame,
    p_values: dict[tuple[str, str], dict[str, float]] | None = None,
    baseline: str | None = None,
) -> pd.DataFrame:
    """``results`` has one row per (condition, method, seed) and a column per metric (NaN = not defined);
    ``p_values`` maps (condition, method) to each metric's p-value against ``baseline``.

    Returns one row per (condition, method) with ``<metric>`` = mean, ``<metric> std`` over seeds
    (sample standard deviation; 0 for a single seed) and ``<metric> p`` (NaN: no test).
    """
    metrics = [m for m in LEADERBOARD_METRICS if m in results.columns]
    grouped = results.groupby(["condition", "method"], sort=False)[metrics]
    means = grouped.mean()
    stds = grouped.std(ddof=1).fillna(0.0).where(means.notna())
    tests = pd.DataFrame.from_dict(p_values or {}, orient="index").reindex(index=means.index, columns=metrics)
    table = means.join(stds.add_suffix(" std")).join(tests.add_suffix(" p"))
    table.insert(0, "seeds", grouped.size())
    table.insert(1, "baseline", table.index.get_level_values("method") == baseline)
    return table[
        ["seeds", "baseline", *[c for m in metrics for c in (m, f"{m} std", f"{m} p")]]
    ].reset_index()


def formatted(board: pd.DataFrame) -> pd.DataFrame:
    """Mean ± std strings; '—' where a metric does not apply (ECE of a non-probabilistic ranker)."""
    out = board[["condition", "method", "seeds"]].copy()
    for metric in LEADERBOARD_METRICS:
        if metric in board:
            out[metric] = [
                "—" if np.isnan(m) else f"{m:.3f} ± {s:.3f}"
                for m, s in zip(board[metric], board[f"{metric} std"], strict=True)
            ]
    return out


def write_leaderboard(board: pd.DataFrame, folder: Path) -> tuple[Path, Path]:
    """Write leaderboard.md (formatted) and leaderboard.csv (raw numbers), each atomically."""
    markdown, csv = folder / "leaderboard.md", folder / "leaderboard.csv"
    _atomic_write(markdown, formatted(board).to_markdown(index=False) + "\n")
    _atomic_write(csv, board.to_csv(index=False))
    return markdown, csv


def _atomic_write(path: Path, text: str) -> None:
    staging = path.with_name(f".{path.name}.tmp")
    staging.write_text(text)
    os.replace(staging, path)
