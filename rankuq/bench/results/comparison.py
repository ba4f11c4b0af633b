"""``rankuq compare``: black-box TREC runs against a baseline TREC run, with paired tests per query.

Each TREC run is evaluated as ``rankuq evaluate`` evaluates it (``bench.evaluation.blackbox``: the
queries of the qrels, ir-measures' values); every other one is tested against the baseline on each metric's
per-query values by the test asked: a two-sided paired Student's t-test (``scipy.stats.ttest_rel``,
as ranx's ``compare``; the default) or Fisher's paired randomisation test (its assignments drawn a
block at a time: two 300k-query TREC runs stay within 2 GB). The p-values are corrected over the
table (every TREC run × metric) by Benjamini–Hochberg or Holm; the marks are the leaderboard's.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rankuq.bench import metrics
from rankuq.bench.evaluation.blackbox import read_inputs
from rankuq.bench.evaluation.paired_tests import randomisation_ps
from rankuq.bench.metrics import lower_is_better
from rankuq.bench.results.leaderboard import ALPHA, BETTER, WORSE, marks
from rankuq.bench.statistics.corrections import corrected
from rankuq.bench.statistics.paired import paired_t
from rankuq.errors import RankuqError
from rankuq.tasks.trec_format import read_trec_qrels

TESTS = {"t": "t-test", "randomisation": "randomisation"}  # option value → column label
TEST_NAMES = {"t": "t-test", "randomisation": "randomisation test"}  # option value → its name in prose
CORRECTION_NAMES = {"bh": "Benjamini–Hochberg", "holm": "Holm"}  # option value → its name in prose


@dataclass(frozen=True)
class Comparison:
    """The table (a row per TREC run: ``run``, its file name, ``baseline``, then per metric its mean,
    the test's raw and corrected p-value, ``{metric} {label} p`` and ``… p {correction}`` with
    ``label`` the test's ``TESTS`` label, and the mark), with what it was made of."""

    table: pd.DataFrame
    metrics: list[str]
    baseline: str
    queries: int
    correction: str
    test: str


def compare(
    trec_runs: Sequence[Path],
    qrels: Path,
    baseline: Path | None = None,
    names: Sequence[str] | None = None,
    correction: str = "bh",
    test: str = "t",
    strict: bool = False,
) -> Comparison:
    """Compare ``trec_runs`` (and ``baseline``, the first unless given) on ``names`` (default
    ``metrics.DEFAULT_METRICS``) by ``test`` (a key of ``TESTS``), whose corrected p-values mark
    a TREC run."""
    if test not in TESTS:
        raise RankuqError(f"unknown test '{test}'; valid: {', '.join(TESTS)}")
    corrected(np.zeros(0), correction)  # refuses an unknown correction before any file is read
    paths = list(dict.fromkeys([*([baseline] if baseline is not None else []), *trec_runs]))
    if len(paths) < 2:
        raise RankuqError("rankuq compare needs at least two runs (a baseline and one to test against it)")
    chosen = _checked_names(names)
    labels = _labels(paths)
    values: dict[str, dict[str, np.ndarray]] = {}
    qids: np.ndarray | None = None
    judged = read_trec_qrels(qrels, strict)  # once: it may be a pipe
    for path, label in zip(paths, labels, strict=True):
        evaluated = read_inputs(trec_run=path, qrels=judged, strict=strict)
        found, values[label] = metrics.per_query(
            evaluated.table, chosen, qrels=evaluated.qrels, source=str(path)
        )
        qids = found  # every TREC run is scored on the qrels' queries
    assert qids is not None
    if len(qids) < 2:
        raise RankuqError(
            f"--test {test}: a paired {TEST_NAMES[test]} needs 2 or more queries, but {qrels} judges "
            f"{len(qids)} with a relevant document; compare runs over more queries"
        )
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
    """Each TREC run's file name, or its path where two share a name."""
    names = [path.name for path in paths]
    return names if len(set(names)) == len(names) else [str(path) for path in paths]


def _table(
    values: dict[str, dict[str, np.ndarray]], baseline: str, names: list[str], correction: str, test: str
) -> pd.DataFrame:
    rows = pd.DataFrame({"run": list(values), "baseline": [label == baseline for label in values]})
    others = rows.index[~rows.baseline]
    raw = np.full((len(rows), len(names)), np.nan)
    for index in others:
        trec_run = values[rows.run[index]]
        differences = np.stack([trec_run[name] - values[baseline][name] for name in names])
        if test == "randomisation":  # one draw of assignments serves every metric
            raw[index] = randomisation_ps(differences)
        else:
            raw[index] = [paired_t(trec_run[name], values[baseline][name]).p for name in names]
    adjusted = corrected(raw.ravel(), correction).reshape(raw.shape)
    label = TESTS[test]
    for column, name in enumerate(names):
        rows[name] = [float(np.mean(v[name])) for v in values.values()]
        rows[f"{name} {label} p"] = raw[:, column]
        rows[f"{name} {label} p {correction}"] = adjusted[:, column]
        rows[f"{name} mark"] = _marks(rows, name, f"{name} {label} p {correction}", baseline)
    return rows


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
    correction = CORRECTION_NAMES[comparison.correction]
    tested = (len(comparison.table) - 1) * len(comparison.metrics)
    return (
        f"{BETTER} significantly better, {WORSE} significantly worse than the baseline "
        f"{comparison.baseline}: "
        f"two-sided paired {TEST_NAMES[comparison.test]} over the {comparison.queries} queries of the qrels, "
        f"p < {ALPHA} after the {correction} correction over the table's {tested} tests"
    )
