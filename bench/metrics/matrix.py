"""Predictions table → padded [queries × candidates] label matrices, ranked as trec_eval ranks.

Ranking rule (trec_eval's ``form_res_rels``, hence pytrec_eval and ir-measures): candidates of a
query are sorted by score descending, and candidates with equal scores (``==``, so -0.0 ties
0.0) by cid descending in byte order (``strcmp``), e.g. tied ``a, b, c`` rank ``c, b, a``. The
order of rows in the table never matters.
"""

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.errors import RankuqError
from bench.predictions import is_probabilistic, validate_predictions


@dataclass(frozen=True)
class RankedLists:
    """Evaluated queries (sorted by qid) and their candidate rows, in rank order.

    ``labels[q, r]`` is the label of the candidate ranked r+1 for query q, ``ideal[q]`` the judged
    labels sorted descending (nDCG's ideal ranking); both are 0-padded, which no metric counts.
    Row arrays (``rows``: index in the source table) cover the ranked candidates for ECE.
    """

    source: str
    probabilistic: bool
    qids: np.ndarray  # [Q] str
    labels: np.ndarray  # [Q, L] int8
    ideal: np.ndarray  # [Q, L'] int8
    n_relevant: np.ndarray  # [Q] judged candidates with label > 0
    row_query: np.ndarray  # [n] index into qids
    rows: np.ndarray  # [n] row in the source table
    scores: np.ndarray  # [n] float64 prob_mean
    row_labels: np.ndarray  # [n] int8

    def select(self, keep: np.ndarray) -> "RankedLists":
        """The queries where ``keep`` is true, with their rows."""
        row_keep = keep[self.row_query]
        new_index = np.cumsum(keep) - 1
        return replace(
            self,
            qids=self.qids[keep],
            labels=self.labels[keep],
            ideal=self.ideal[keep],
            n_relevant=self.n_relevant[keep],
            row_query=new_index[self.row_query[row_keep]],
            rows=self.rows[row_keep],
            scores=self.scores[row_keep],
            row_labels=self.row_labels[row_keep],
        )


def ranked_lists(
    table: pa.Table, *, qrels: pa.Table | None = None, source: str = "predictions"
) -> RankedLists:
    """Rank every query of a contract-2 table (scores = ``prob_mean``) without a per-query loop.

    Without ``qrels`` the table is its own qrels: the queries are the table's, and relevant
    counts and ideal rankings come from its labels. With ``qrels`` (columns qid, cid, label) the
    queries are the qrels' as in ir-measures: table rows of other queries are ignored, a qrels
    query absent from the table has an empty list (every metric 0), and relevant documents the
    table lacks still count in R@k, AP and the nDCG ideal.
    """
    validate_predictions(table, source)
    if table.num_rows == 0:
        raise RankuqError(f"{source}: no rows; a predictions table needs at least one candidate")
    labels = _labels(table, source)
    qids = _sorted_unique(table if qrels is None else qrels)
    codes = pc.fill_null(pc.index_in(table["qid"], value_set=qids), -1).to_numpy()
    rows = np.flatnonzero(codes >= 0)
    if rows.size == 0:
        raise RankuqError(
            f"{source}: no row belongs to a query of the qrels; check both use the same qids"
        )
    scores = np.asarray(table["prob_mean"].to_numpy(), dtype=np.float64)
    keys = pa.table({"q": codes[rows], "s": scores[rows], "c": table["cid"].take(rows)})
    order = rows[
        pc.sort_indices(
            keys, sort_keys=[("q", "ascending"), ("s", "descending"), ("c", "descending")]
        ).to_numpy()
    ]
    ranked = _pad(codes[order], labels[order], len(qids))
    if qrels is None:
        ideal = ranked
    else:
        judged_codes = pc.index_in(qrels["qid"], value_set=qids).to_numpy()
        by_query = np.argsort(judged_codes, kind="stable")
        ideal = _pad(judged_codes[by_query], _labels(qrels, "qrels")[by_query], len(qids))
    ideal = np.flip(np.sort(ideal, axis=1), axis=1)
    return RankedLists(
        source=source,
        probabilistic=is_probabilistic(table),
        qids=qids.to_numpy(zero_copy_only=False),
        labels=ranked,
        ideal=ideal,
        n_relevant=(ideal > 0).sum(axis=1),
        row_query=codes[order],
        rows=order,
        scores=scores[order],
        row_labels=labels[order],
    )


def _labels(table: pa.Table, source: str) -> np.ndarray:
    """The label column as int8, refusing missing or negative labels (relevance is >= 0)."""
    for name in ("qid", "cid", "label"):
        column = table[name]
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise RankuqError(f"{source}: row {row}: {name} is missing; every row needs one")
    labels = table["label"].to_numpy()
    bad = np.flatnonzero((labels < 0) | (labels > np.iinfo(np.int8).max))
    if bad.size:
        row = int(bad[0])
        raise RankuqError(
            f"{source}: row {row} (qid {table['qid'][row]}, cid {table['cid'][row]}): label "
            f"{labels[row]} is outside 0..127; relevance labels are graded 0 (non-relevant) and up"
        )
    return labels.astype(np.int8)


def _sorted_unique(table: pa.Table) -> pa.Array:
    unique = pc.unique(table["qid"])
    return unique.take(pc.sort_indices(unique))


def _pad(codes: np.ndarray, values: np.ndarray, n_queries: int) -> np.ndarray:
    """[n_queries, longest list] matrix of ``values`` grouped by ``codes`` (non-decreasing)."""
    counts = np.bincount(codes, minlength=n_queries)
    starts = np.cumsum(counts) - counts
    matrix = np.zeros((n_queries, counts.max()), dtype=values.dtype)
    matrix[codes, np.arange(codes.size) - starts[codes]] = values
    return matrix
