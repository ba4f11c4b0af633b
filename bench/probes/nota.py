"""None-of-the-above prediction (paper 000 §4.2, §5.3): does a query's score list, and its
uncertainty, tell whether any candidate is relevant?

A query is NOTA when none of its candidates is relevant (label 0 throughout). A random forest
(100 trees) classifies NOTA from the top-k mean scores in rank order (input space E[R]) and from
those plus the k candidates' variances (E[R] + var[R], stochastic rankers only), with the same
stratified 5-fold cross-validation for both; F1-macro per fold.

Metric keys: ``NOTA.F1.mean``, ``NOTA.F1.mean.std`` (over the folds), ``NOTA.F1.mean_var``,
``NOTA.F1.mean_var.std`` and ``NOTA.p_value`` (paired t-test over the folds, E[R] + var[R]
against E[R]).
"""

import numpy as np
import pyarrow as pa

from rankuq.bench.probes.base import PROBES, ProbeResult, ScoredLists, as_lists, top_k
from rankuq.bench.probes.confidence import K
from rankuq.bench.probes.significance import mean_std, paired_t
from rankuq.errors import RankuqError

FOLDS = 5


def nota_labels(lists: ScoredLists) -> np.ndarray:
    """True for the queries with no relevant candidate."""
    return lists.ranked.n_relevant == 0


def fold_f1(features: np.ndarray, nota: np.ndarray, seed: int = 0) -> np.ndarray:
    """F1-macro of a random forest (100 trees, ``random_state=seed``) on each of the FOLDS
    stratified folds (shuffled with ``seed``)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(features, nota)
    scores = []
    for train, test in folds:
        forest = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
        predicted = forest.fit(features[train], nota[train]).predict(features[test])
        scores.append(f1_score(nota[test], predicted, average="macro"))
    return np.array(scores)


@PROBES.register
def run(
    predictions: pa.Table | ScoredLists,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    k: int = K,
) -> ProbeResult:
    """NOTA F1-macro of each input space over every query of ``predictions`` (lists shorter than
    k repeat their last candidate, ``top_k``); ``dev`` is unused (cross-validation)."""
    lists = as_lists(predictions)
    nota = nota_labels(lists)
    smaller = min(nota.sum(), (~nota).sum())
    if smaller < FOLDS:
        raise RankuqError(
            f"{lists.ranked.source}: NOTA prediction needs at least {FOLDS} queries with and {FOLDS} "
            f"without a relevant candidate for {FOLDS}-fold cross-validation; the table has "
            f"{(~nota).sum()} and {nota.sum()} (keep the task's NOTA queries in the predictions)"
        )
    means = top_k(lists.scores, lists.length, k)
    f1 = {"mean": fold_f1(means, nota, seed)}
    notes = ()
    if lists.samples is None:
        notes = ("NOTA: one draw per candidate (S = 1), so the E[R] + var[R] input space is left out",)
    else:
        f1["mean_var"] = fold_f1(np.hstack([means, top_k(lists.variance(), lists.length, k)]), nota, seed)
    values = {}
    for space, scores in f1.items():
        values[f"NOTA.F1.{space}"], values[f"NOTA.F1.{space}.std"] = mean_std(scores)
    if "mean_var" in f1:
        values["NOTA.p_value"] = paired_t(f1["mean_var"], f1["mean"]).p
    return ProbeResult(values, curves={"NOTA": {"fold": np.arange(FOLDS), **f1}}, notes=notes)
