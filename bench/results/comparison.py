"""``rankuq compare``: black-box TREC runs against a baseline run, with paired tests per query.

Each run is evaluated as ``rankuq evaluate`` evaluates it (``bench.evaluation.blackbox``: the queries
of the qrels, ir-measures' values); every other run is tested against the baseline on each metric's
per-query values by a two-sided paired Student's t-test (``scipy.stats.ttest_rel``, as ranx's
``compare``) and Fisher's paired randomisation test. Each test's p-values are corrected over the
table (every run × metric) by Benjamini–Hochberg or Holm; the marks are the leaderboard's.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rankuq.bench import metrics
from rankuq.bench.evaluation.blackbox import read_inputs
from rankuq.bench.evaluation.corrections import corrected
from rankuq.bench.evaluation.paired_tests import randomisation_p
from rankuq.bench.probes.significance import paired_t
from rankuq.bench.results.leaderboard import ALPHA, BETTER, WORSE, lower_is_better, marks
from rankuq.errors import RankuqError

TESTS = {"t": "t-test", "randomisation": "randomisation"}  # option value → column label


@dataclass(frozen=True)
class Comparison:
    """The table (a row per run: ``run``, ``baseline``, then per metric its mean, each test's raw and
    corrected p-value and the mark), with what it was made of."""

    table: pd.DataFrame
    metrics: list[str]
    baseline: str
    queries: int
    correction: str
    test: str


def compare(
    runs: Sequence[Path],
    qrels: Path,
    baseline: Path | None = None,
    names: Sequence[str] | None = None,
    correction: str = "bh",
    test: str = "t",
    strict: bool = False,
) -> Comparison:
    """Compare ``runs`` (and ``baseline``, the first run unless given) on ``names`` (default
    ``metrics.DEFAULT_METRICS``); ``test`` picks the test whose corrected p-values mark a run."""
    if test not in TESTS:
        raise RankuqError(f"unknown test '{test}'; valid: {', '.join(TESTS)}")
    corrected(np.zeros(0), correction)  # refuses an unknown correction before any file is read
    paths = list(dict.fromkeys([*([baseline] if baseline is not None else []), *runs]))
    if len(paths) < 2:
        raise RankuqError("rankuq compare needs at least two runs (a baseline and one to test against it)")
    chosen = _checked_names(names)
    labels = _labels(paths)
    values: dict[str, dict[str, np.ndarray]] = {}
    qids: np.ndarray | None = None
    for path, label in zip(paths, labels, strict=True):
        evaluated = read_inputs(run=path, qrels=qrels, strict=strict)
        found, values[label] = metrics.per_query(
            evaluated.table, chosen, qrels=evaluated.qrels, source=str(path)
        )
        qids = found  # every run is scored on the qrels' queries
    assert qids is not None
    table = _table(values, labels[0], chosen, correction, test)
    return Comparison(table, chosen, labels[0], len(qids), correction, test)


def _checked_names(names: Sequence[str] | None) -> list[str]:
    chosen = list(dict.fromkeys(names or metrics.DEFAULT_METRICS))
    pooled = [name for name in chosen if metrics.get(name).family.pooled]
    if pooled:
        raise RankuqError(
            f"--metrics {', '.join(pooled)}: pooled over every candidate, no per-query value to test; "
            "compare ranking metrics (e.g. AP,nDCG@10,RR@10)"
        )
    return chosen


def _labels(paths: list[Path]) -> list[str]:
    """Each run's file name, or its path where two runs share a name."""
    names = [path.name for path in paths]
    return names if len(set(names)) == len(names) else [str(path) for path in paths]


def _table(
    values: dict[str, dict[str, np.ndarray]], baseline: str, names: list[str], correction: str, test: str
) -> pd.DataFrame:
    rows = pd.DataFrame({"run": list(values), "baseline": [run == baseline for run in values]})
    others = rows.index[~rows.baseline]
    for name in names:
        base = values[baseline][name]
        rows[name] = [float(np.mean(v[name])) for v in values.values()]
        for label, run_test in _RUN_TESTS.items():
            rows[f"{name} {label} p"] = np.nan
            rows.loc[others, f"{name} {label} p"] = [
                run_test(values[r][name], base) for r in rows.run[others]
            ]
    for label in TESTS.values():
        columns = [f"{name} {label} p" for name in names]
        adjusted = corrected(rows[columns].to_numpy().ravel(), correction).reshape(len(rows), -1)
        for column, values_of in zip(columns, adjusted.T, strict=True):
            rows[f"{column} {correction}"] = values_of
    for name in names:
        rows[f"{name} mark"] = _marks(rows, name, f"{name} {TESTS[test]} p {correction}", baseline)
    return rows[["run", "baseline", *(c for name in names for c in _columns(name, correction))]]


def _t_test_p(a: np.ndarray, b: np.ndarray) -> float:
    return paired_t(a, b).p


_RUN_TESTS = {"t-test": _t_test_p, "randomisation": randomisation_p}  # column label → test


def _columns(name: str, correction: str) -> list[str]:
    tests = [f"{name} {label} p{suffix}" for label in TESTS.values() for suffix in ("", f" {correction}")]
    return [name, *tests, f"{name} mark"]


def _marks(rows: pd.DataFrame, name: str, p_column: str, baseline: str) -> list[str]:
    """The leaderboard's marks: BETTER or WORSE where the corrected p is below ALPHA."""
    reference = float(rows.loc[rows.run == baseline, name].iloc[0])
    mean = rows[name].to_numpy(dtype=float)
    return list(
        marks(
            mean, np.full(mean.shape, reference), rows[p_column].to_numpy(dtype=float), lower_is_better(name)
        )
    )


def footnote(comparison: Comparison) -> str:
    """What the marks say, in one sentence."""
    correction = {"bh": "Benjamini–Hochberg", "holm": "Holm"}[comparison.correction]
    tested = (len(comparison.table) - 1) * len(comparison.metrics)
    return (
        f"{BETTER} significantly better, {WORSE} significantly worse than the baseline "
        f"{comparison.baseline}: "
        f"two-sided paired {TESTS[comparison.test]} over the {comparison.queries} queries of the qrels, "
        f"p < {ALPHA} after the {correction} correction over the table's {tested} tests"
    )
