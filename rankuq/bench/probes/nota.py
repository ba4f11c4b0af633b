"""None-of-the-above prediction (Penha & Hauff, 2021 §4.2, §5.3): does a query's score list, and its
uncertainty, tell whether any candidate is relevant?

A query is NOTA when none of its candidates is relevant (label 0 throughout). A random forest
(100 trees) classifies NOTA from the top-k mean scores in rank order (input space E[R]) and from
those plus the k candidates' variances (E[R] + var[R], stochastic rankers only), with the same
stratified 5-fold cross-validation for both; F1-macro per fold.

Metric keys: ``NOTA.F1.mean``, ``NOTA.F1.mean.std`` (over the folds), ``NOTA.F1.mean_var``,
``NOTA.F1.mean_var.std`` and ``NOTA.p_value`` (paired t-test over the folds, E[R] + var[R]
against E[R]).

``cross_method`` is Penha & Hauff, 2021's cross-method input space (Tables 4–5, "E[R^D] + var[R^E]"): one
ranker's means (e.g. the deterministic `bert`) with another ranker's variances of the same
candidates (e.g. the ensemble's), keys ``NOTA.F1.mean_cross_var``, ``NOTA.F1.mean_cross_var.std``
and ``NOTA.cross.p_value`` beside the means-only space.

Parts (``bench.statistics.parts``, one row per query of the table, every query): ``NOTA.F1.<space>`` (and
``NOTA.F1.mean_cross_var``), rows [fold, NOTA truth, out-of-fold prediction] (truth and prediction 1
for NOTA, 0 otherwise), statistic ``fold_f1_macro``: the mean over the folds of F1-macro. A resample
keeps each query's fold and prediction (the forests are not refitted); a fold no resampled query
falls in is left out of the mean.
"""

import numpy as np
import pyarrow as pa

from rankuq.bench.metrics.matrix import pad_by_query
from rankuq.bench.probes.base import PROBES, ProbeResult, ScoredLists, as_lists, scored_lists, top_k
from rankuq.bench.probes.confidence import K
from rankuq.bench.statistics.paired import mean_std, paired_t
from rankuq.bench.statistics.parts import QueryParts, statistic
from rankuq.errors import RankuqError

FOLDS = 5


def nota_labels(lists: ScoredLists) -> np.ndarray:
    """True for the queries with no relevant candidate."""
    return np.asarray(lists.ranked.n_relevant == 0)


def fold_f1(
    features: np.ndarray, nota: np.ndarray, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F1-macro of a random forest (100 trees, ``random_state=seed``) on each of the FOLDS
    stratified folds (shuffled with ``seed``), with each query's fold (0 … FOLDS − 1) and its
    out-of-fold prediction (the forest's of its fold)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.metrics import f1_score
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(features, nota)
    scores = []
    fold, predictions = np.zeros(len(nota), dtype=np.int64), np.zeros(len(nota), dtype=nota.dtype)
    for index, (train, test) in enumerate(folds):
        forest = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
        predicted = forest.fit(features[train], nota[train]).predict(features[test])
        scores.append(f1_score(nota[test], predicted, average="macro"))
        fold[test], predictions[test] = index, predicted
    return np.array(scores), fold, predictions


@statistic
def fold_f1_macro(rows: np.ndarray) -> float:
    """Rows [fold, truth, prediction]: the mean over the folds present of F1-macro, each fold's
    as ``sklearn.metrics.f1_score(average="macro")``: the mean over the classes in the fold's truth
    or predictions of 2·TP / (#true + #predicted) (a class never predicted scores 0, where sklearn's
    zero_division gives precision 0; a fold with one class, all right, scores 1). Repeated rows (a
    resample) count as often as they appear."""
    folds, fold = np.unique(rows[:, 0], return_inverse=True)
    classes, labels = np.unique(rows[:, 1:], return_inverse=True)
    truth, predicted = labels.reshape(-1, 2).T
    cells = folds.size * classes.size
    true_count = np.bincount(fold * classes.size + truth, minlength=cells)
    predicted_count = np.bincount(fold * classes.size + predicted, minlength=cells)
    hits = np.bincount(fold * classes.size + truth, weights=truth == predicted, minlength=cells)
    denominator = (true_count + predicted_count).reshape(folds.size, classes.size)
    present = denominator > 0
    twice_hits = 2 * hits.reshape(denominator.shape)
    f1 = np.divide(twice_hits, denominator, out=np.zeros(denominator.shape), where=present)
    return float((f1.sum(axis=1) / present.sum(axis=1)).mean())


def _fold_parts(qids: np.ndarray, nota: np.ndarray, fold: np.ndarray, predicted: np.ndarray) -> QueryParts:
    rows = np.column_stack([fold, nota, predicted]).astype(np.float64)
    return QueryParts(np.asarray(qids), rows, "fold_f1_macro")


@PROBES.register
def probe(
    predictions: pa.Table | ScoredLists,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    k: int = K,
) -> ProbeResult:
    """NOTA F1-macro of each input space over every query of ``predictions`` (lists shorter than
    k repeat their last candidate, ``top_k``); ``dev`` is unused (cross-validation)."""
    lists = as_lists(predictions)
    nota = _checked_labels(lists)
    means = top_k(lists.scores, lists.length, k)
    f1 = {"mean": fold_f1(means, nota, seed)}
    notes: tuple[str, ...] = ()
    if lists.samples is None:
        notes = ("NOTA: one draw per candidate (S = 1), so the E[R] + var[R] input space is left out",)
    else:
        f1["mean_var"] = fold_f1(np.hstack([means, top_k(lists.variance(), lists.length, k)]), nota, seed)
    return _result(lists.qids, nota, f1, "mean_var", "NOTA.p_value", notes)


def cross_method(means: pa.Table, variances: pa.Table, *, seed: int = 0, k: int = K) -> ProbeResult:
    """Paper 000's cross-method NOTA input: the top-k means of ``means`` (a ranker's predictions,
    ranked by them) beside the variances ``variances`` (another ranker's predictions of the same
    (qid, cid) rows with S > 1 draws, e.g. the ensemble's) gives those k candidates, against the
    means alone, on the same folds. Every row of ``means`` needs its row in ``variances`` with the
    same label."""
    lists = scored_lists(means, "means")
    nota = _checked_labels(lists)
    row_variance = _aligned_variance(means, variances)
    variance = pad_by_query(lists.ranked.row_query, row_variance[lists.ranked.rows], lists.length.size)
    top = top_k(lists.scores, lists.length, k)
    f1 = {
        "mean": fold_f1(top, nota, seed),
        "mean_cross_var": fold_f1(np.hstack([top, top_k(variance, lists.length, k)]), nota, seed),
    }
    return _result(lists.qids, nota, f1, "mean_cross_var", "NOTA.cross.p_value", ())


def _aligned_variance(means: pa.Table, variances: pa.Table) -> np.ndarray:
    """The draws' variance (population) of the ``variances`` row with each ``means`` row's (qid, cid)."""
    if "samples" not in variances.column_names:
        raise RankuqError("variances: no samples column; pass the predictions of a ranker with S > 1 draws")
    column = variances["samples"].combine_chunks()
    counts = column.value_lengths().fill_null(0).to_numpy()
    if counts.min() < 2 or counts.max() != counts.min():
        raise RankuqError(
            f"variances: rows hold {counts.min()}–{counts.max()} draws; the cross-method input needs "
            "the same S > 1 draws on every row (a stochastic ranker's predictions)"
        )
    draws = column.flatten().to_numpy().reshape(len(column), -1).astype(np.float64)
    other = pa.table(
        {
            "qid": variances["qid"],
            "cid": variances["cid"],
            "other_label": variances["label"],
            "variance": draws.var(axis=1),
            "other_row": np.arange(variances.num_rows),
        }
    )
    mine = pa.table({"qid": means["qid"], "cid": means["cid"], "label": means["label"]})
    mine = mine.append_column("row", pa.array(np.arange(means.num_rows)))
    joined = mine.join(other, ["qid", "cid"], join_type="left outer").sort_by("row")
    if joined.num_rows != means.num_rows:
        raise RankuqError("variances: a (qid, cid) appears twice; keep one row per candidate")
    missing = np.flatnonzero(joined["other_row"].is_null().to_numpy(zero_copy_only=False))
    if missing.size:
        row = int(missing[0])
        raise RankuqError(
            f"variances: no row for qid {joined['qid'][row]}, cid {joined['cid'][row]} (means row {row}; "
            f"{missing.size} missing in all); score both rankers on the same candidate lists"
        )
    differ = np.flatnonzero(joined["label"].to_numpy() != joined["other_label"].to_numpy())
    if differ.size:
        row = int(differ[0])
        raise RankuqError(
            f"variances: qid {joined['qid'][row]}, cid {joined['cid'][row]} has label "
            f"{joined['other_label'][row]} there and {joined['label'][row]} in means; score both "
            "rankers on the same split"
        )
    return np.asarray(joined["variance"].to_numpy())


def _checked_labels(lists: ScoredLists) -> np.ndarray:
    """``nota_labels``, refused when 5-fold cross-validation cannot stratify them."""
    nota = nota_labels(lists)
    smaller = min(nota.sum(), (~nota).sum())
    if smaller < FOLDS:
        raise RankuqError(
            f"{lists.ranked.source}: NOTA prediction needs at least {FOLDS} queries with and {FOLDS} "
            f"without a relevant candidate for {FOLDS}-fold cross-validation; the table has "
            f"{(~nota).sum()} and {nota.sum()} (keep the task's NOTA queries in the predictions)"
        )
    return nota


def _result(
    qids: np.ndarray,
    nota: np.ndarray,
    folds: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    with_variance: str,
    p_key: str,
    notes: tuple[str, ...],
) -> ProbeResult:
    """Mean ± std of each space's fold F1 (``fold_f1``'s), its parts, and the paired t-test of the
    space with variances against the means alone (when there is one)."""
    f1 = {space: scores for space, (scores, _, _) in folds.items()}
    values = {}
    for space, scores in f1.items():
        values[f"NOTA.F1.{space}"], values[f"NOTA.F1.{space}.std"] = mean_std(scores)
    if with_variance in f1:
        values[p_key] = paired_t(f1[with_variance], f1["mean"]).p
    parts = {
        f"NOTA.F1.{space}": _fold_parts(qids, nota, fold, predicted)
        for space, (_, fold, predicted) in folds.items()
    }
    return ProbeResult(values, curves={"NOTA": {"fold": np.arange(FOLDS), **f1}}, notes=notes, parts=parts)
