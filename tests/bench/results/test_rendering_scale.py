# ruff: noqa: E501 (the expected tables' lines are as wide as the tables)
"""The paper tables of a large board render in seconds and a column at a time: a board of 200,000
rows (once 87 s for 2,000 rows, and minutes to draw its overview plot), and the small board byte for
byte as the per-cell renderer (pandas' Styler, tabulate) wrote it."""

import time

import numpy as np
import pandas as pd

from rankuq.bench.results.boards import Board, read_run_dir
from rankuq.bench.results.leaderboard import KEYS, LEADERBOARD_METRICS, board_columns, fixed
from rankuq.bench.results.rendering import paper_latex, paper_markdown
from rankuq.bench.results.report import render_report

# The conftest board as the per-cell renderer wrote it (rankuq before the columnar tables).
OLD_MARKDOWN = """\
# Leaderboard: my-grid

## wikiqa

| method          |   seeds | R@1                           | ECE                           | nAUC AP u_max               |
|:----------------|--------:|:------------------------------|:------------------------------|:----------------------------|
| bm25            |       2 | 0.380 ± 0.000 (-5.00%)        | —                             | —                           |
| bert (baseline) |       2 | 0.400 ± 0.050                 | 0.200 ± 0.010                 | 0.300 ± 0.020               |
| ensemble        |       2 | **0.440 ± 0.020** (+10.00% †) | **0.150 ± 0.005** (-25.00% †) | **0.330 ± 0.010** (+10.00%) |

## clariq-to-wikiqa

| method          |   seeds | R@1                           | ECE                       | nAUC AP u_max              |
|:----------------|--------:|:------------------------------|:--------------------------|:---------------------------|
| bm25            |       2 | **0.300 ± 0.000** (+20.00% †) | —                         | —                          |
| bert (baseline) |       2 | 0.250 ± 0.010                 | **0.100 ± 0.020**         | **0.200 ± 0.010**          |
| ensemble        |       2 | 0.200 ± 0.030 (-20.00% ‡)     | 0.125 ± 0.010 (+25.00% ‡) | **0.200 ± 0.030** (+0.00%) |

Mean ± std over seeds (the mean alone for one seed); in brackets the relative change against the baseline method of the condition; † significantly better, ‡ significantly worse than the baseline (two-sided paired t-test on per-query values averaged over seeds, the papers' test, blind to the seeds' spread, which the findings' two-level bootstrap counts; for ECE, ECE.all, ERCE, Brier and NLL a paired bootstrap over queries, 1,000 resamples; p < 0.05 after the Benjamini–Hochberg correction over the tests of the condition's table); lower is better for ECE; bold: the best value of a column; —: not defined for the method.
"""
OLD_LATEX = r"""\begin{table}
\centering
\caption{my-grid: wikiqa}
\begin{tabular}{lrlll}
\toprule
method & seeds & R@1 & ECE & nAUC AP u\_max \\
\midrule
bm25 & 2 & $0.380 \pm 0.000$ & -- & -- \\
bert (baseline) & 2 & $0.400 \pm 0.050$ & $0.200 \pm 0.010$ & $0.300 \pm 0.020$ \\
ensemble & 2 & $\mathbf{0.440 \pm 0.020}$\textsuperscript{\dag} & $\mathbf{0.150 \pm 0.005}$\textsuperscript{\dag} & $\mathbf{0.330 \pm 0.010}$ \\
\bottomrule
\end{tabular}
\end{table}

\begin{table}
\centering
\caption{my-grid: clariq-to-wikiqa}
\begin{tabular}{lrlll}
\toprule
method & seeds & R@1 & ECE & nAUC AP u\_max \\
\midrule
bm25 & 2 & $\mathbf{0.300 \pm 0.000}$\textsuperscript{\dag} & -- & -- \\
bert (baseline) & 2 & $0.250 \pm 0.010$ & $\mathbf{0.100 \pm 0.020}$ & $\mathbf{0.200 \pm 0.010}$ \\
ensemble & 2 & $0.200 \pm 0.030$\textsuperscript{\ddag} & $0.125 \pm 0.010$\textsuperscript{\ddag} & $\mathbf{0.200 \pm 0.030}$ \\
\bottomrule
\end{tabular}
\end{table}

% Mean ± std over seeds (the mean alone for one seed); \dag{} significantly better, \ddag{} significantly worse than the baseline (two-sided paired t-test on per-query values averaged over seeds, the papers' test, blind to the seeds' spread, which the findings' two-level bootstrap counts; for ECE, ECE.all, ERCE, Brier and NLL a paired bootstrap over queries, 1,000 resamples; p < 0.05 after the Benjamini–Hochberg correction over the tests of the condition's table); lower is better for ECE; bold: the best value of a column; —: not defined for the method.
"""


def test_the_small_board_renders_as_the_per_cell_code_did(run_dir):
    board = read_run_dir(run_dir)
    assert paper_markdown(board) == OLD_MARKDOWN
    assert paper_latex(board) == OLD_LATEX


def test_fixed_formats_as_python_does_ties_and_extremes_included():
    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, 0.0005, 0.0015, 0.0625, 0.9995, 9.9995, -1e-9, 2.5e-4, 123456.7895, 1e300, np.inf]
    values = np.concatenate([rng.random(10_000), rng.normal(0, 1e3, 10_000), edges, np.negative(edges)])
    for decimals, plus in ((3, ""), (2, "+")):
        assert fixed(values, decimals, plus).tolist() == [f"{v:{plus}.{decimals}f}" for v in values.tolist()]


def _board(rows: int) -> pd.DataFrame:
    """One condition, ``rows`` methods (m0 the baseline), every leaderboard metric: mean i/rows,
    std 0.01, p 0.001 (significant) for the others."""
    share = np.arange(rows) / rows
    table = pd.DataFrame({"condition": "c", "method": [f"m{i}" for i in range(rows)], "seeds": 3})
    table["baseline"] = share == 0
    for metric in LEADERBOARD_METRICS:
        table[metric], table[f"{metric} std"] = share + 0.5, 0.01
        table[f"{metric} p"] = np.where(table.baseline, np.nan, 0.001)
    return table[[*KEYS, *board_columns(LEADERBOARD_METRICS)]]


def test_a_board_of_200k_rows_renders_in_seconds():
    """Markdown, LaTeX and HTML of 200,000 rows × 13 metrics within 60 CPU seconds (measured: about
    15 on this 2-core machine under load; the per-cell code took 87 s for 2,000 rows). m1 against
    the baseline m0: mean 0.500005 → 0.500, +0.00% (1/200,000 of 0.5), better (R@1: higher is
    better), ECE worse (lower is better)."""
    board = Board("big", _board(200_000), ())
    start = time.process_time()
    markdown, latex, html = paper_markdown(board), paper_latex(board), render_report(board)
    assert time.process_time() - start < 60
    assert markdown.count("\n| m") == 1 + 200_000 and latex.count("\\\\\n") == 200_001
    assert "| m1            |       3 | 0.500 ± 0.010 (+0.00% †)" in markdown
    assert "m1 & 3 & $0.500 \\pm 0.010$\\textsuperscript{\\dag} & " in latex
    assert "<td>m199999</td><td>3</td><td><strong>1.500 ± 0.010</strong>" in html
    assert "No overview plot: 200,000 methods" in html


def test_fixed_of_no_values_is_empty():
    """A condition whose compared cells are all undefined formats nothing (numpy's zfill raised)."""
    assert fixed(np.array([], dtype=float), 2, "+").to_pylist() == []
