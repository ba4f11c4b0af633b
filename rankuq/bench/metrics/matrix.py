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

from rankuq.bench.predictions import is_probabilistic, validate_predictions
from rankuq.errors import RankuqError


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
    qids, codes = _query_codes(table, qrels)
    rows = np.flatnonzero(codes >= 0)
    if rows.size == 0:
        raise RankuqError(f"{source}: no row belongs to a query of the qrels; check both use the same qids")
    scores = np.asarray(table["prob_mean"].to_numpy(), dtype=np.float64)
    ranked_rows = _rank_rows(table, codes, scores, rows[np.argsort(codes[rows], kind="stable")], len(qids))
    valid = ranked_rows >= 0
    if valid.all():  # lists of one length: nothing to mask
        order, ranked = ranked_rows.ravel(), labels[ranked_rows]
    else:
        order, ranked = ranked_rows[valid], np.where(valid, labels[ranked_rows], 0).astype(np.int8)
    if qrels is None:
        ideal = ranked
    else:
        judged_codes = pc.index_in(qrels["qid"], value_set=qids).to_numpy()
        by_query = np.argsort(judged_codes, kind="stable")
        ideal = pad_by_query(judged_codes[by_query], _labels(qrels, "qrels")[by_query], len(qids))
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


def _query_codes(table: pa.Table, qrels: pa.Table | None) -> tuple[pa.Array, np.ndarray]:
    """The sorted query ids and each table row's index into them (-1: not a qrels query).

    Rows of a query are usually contiguous, so ids are compared once per block of equal ids, not
    once per row.
    """
    qid = table["qid"].combine_chunks()
    starts = np.flatnonzero(np.concatenate([[True], _changes(qid)]))
    block_qids = qid.take(starts)
    if qrels is None:
        qids, block_codes = _sorted_codes(block_qids)
    else:
        qids = _sorted_codes(qrels["qid"].combine_chunks())[0]
        block_codes = pc.fill_null(pc.index_in(block_qids, value_set=qids), -1).to_numpy()
    return qids, np.repeat(block_codes, np.diff(np.append(starts, len(qid))))


def _sorted_codes(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Sorted unique values (byte order) and each value's index into them, by one sort (no
    hashing, which is several times slower on a million strings)."""
    order = pc.sort_indices(values).to_numpy()
    ordered = values.take(order)
    new = np.concatenate([[True], _changes(ordered)])
    codes = np.empty(len(values), dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ordered.filter(new), codes


def _changes(values: pa.Array) -> np.ndarray:
    """values[i] != values[i - 1] for i >= 1."""
    n = len(values)
    return np.asarray(pc.not_equal(values.slice(1), values.slice(0, n - 1)).to_numpy(zero_copy_only=False))


def _rank_rows(
    table: pa.Table, codes: np.ndarray, scores: np.ndarray, grouped: np.ndarray, n_queries: int
) -> np.ndarray:
    """[Q, L] table rows of each query in rank order, -1 beyond the list.

    ``grouped`` holds the evaluated rows sorted by query. A sort by score within each row of
    the padded matrix ranks the lists; the queries with tied scores (on a typical run, a few
    percent of them) are then re-sorted with the cid tie rule.
    """
    query = codes[grouped]
    counts = np.bincount(query, minlength=n_queries)
    valid = np.arange(counts.max()) < counts[:, None]
    complete = counts.min() == counts.max()  # lists of one length: no padding to keep last
    padded = grouped.reshape(n_queries, -1) if complete else pad_by_query(query, grouped, n_queries)
    values = scores[padded] if complete else np.where(valid, scores[padded], -np.inf)
    by_score = np.argsort(values, axis=1)[:, ::-1]  # any order of ties: they are re-sorted below
    ranked = np.take_along_axis(padded, by_score, axis=1)
    ordered = np.take_along_axis(values, by_score, axis=1)
    same = ordered[:, 1:] == ordered[:, :-1]
    if not complete:  # padding sorted last, so the first `length` columns are the list
        ranked[~valid] = -1
        same &= valid[:, 1:]
    tied = np.flatnonzero(same.any(axis=1))
    if tied.size:
        rows = ranked[tied][valid[tied]]
        keys = pa.table({"q": codes[rows], "s": scores[rows], "c": table["cid"].take(rows)})
        rows = rows[
            pc.sort_indices(
                keys, sort_keys=[("q", "ascending"), ("s", "descending"), ("c", "descending")]
            ).to_numpy()
        ]
        # sorted by query, each query's rows together: tied query k holds counts[tied[k]] rows
        fixed = pad_by_query(np.repeat(np.arange(tied.size), counts[tied]), rows, tied.size)
        width = fixed.shape[1]  # the longest tied list; columns beyond it stay -1
        ranked[tied, :width] = np.where(valid[tied, :width], fixed, -1)
    return ranked


def _labels(table: pa.Table, source: str) -> np.ndarray:
    """The label column as int8, refusing missing, negative or fractional labels (grades 0, 1, …)."""
    for name in ("qid", "cid", "label"):
        column = table[name]
        if column.null_count:
            row = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
            raise RankuqError(f"{source}: row {row}: {name} is missing; every row needs one")
    labels = table["label"].to_numpy()
    outside = (labels < 0) | (labels > np.iinfo(np.int8).max)
    if not np.issubdtype(labels.dtype, np.integer):
        outside |= labels != np.floor(labels)  # 0.5 or NaN would silently truncate to 0
    bad = np.flatnonzero(outside)
    if bad.size:
        row = int(bad[0])
        raise RankuqError(
            f"{source}: row {row} (qid {table['qid'][row]}, cid {table['cid'][row]}): label "
            f"{labels[row]} is outside 0..127 or not a whole number; relevance labels are graded "
            "0 (non-relevant), 1, 2, …"
        )
    return np.asarray(labels.astype(np.int8))


def pad_by_query(codes: np.ndarray, values: np.ndarray, n_queries: int) -> np.ndarray:
    """[n_queries, longest list, …] matrix of ``values`` (rows, any trailing shape) grouped by
    ``codes`` (non-decreasing), in row order within a query and 0-padded (a view of ``values``
    when every query has the same number of rows)."""
    counts = np.bincount(codes, minlength=n_queries)
    if counts.min() == counts.max():  # lists of one length: a reshape, no scatter
        return values.reshape(n_queries, counts[0], *values.shape[1:])
    starts = np.cumsum(counts) - counts
    matrix = np.zeros((n_queries, counts.max(), *values.shape[1:]), dtype=values.dtype)
    matrix[codes, np.arange(codes.size) - starts[codes]] = values
    return matrix
