"""Measures the vectorised core does not compute, delegated to ir-measures rather than written again:
``RR@k`` (MS MARCO's MRR@k), graded thresholds (``P(rel=2)@10``, ``AP(rel=2)``), ``Judged@k``,
``ERR@k`` (gdeval), ``Rprec`` and any other measure an installed ir-measures provider computes.

Values are ir-measures' own (``ir_measures.iter_calc``, its default provider order), on the same
query set as the core's: a query of the set that the ranked table misses scores the measure's default (0).
Ties follow the provider (MS MARCO's RR and the judged rate sort tied documents by docno ascending,
trec_eval's providers descending).
"""

from collections.abc import Sequence

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from ir_measures.measures import Measure


def parse(name: str) -> Measure | None:
    """The ir-measures measure spelled ``name``, or None when ir-measures does not know it."""
    try:
        return ir_measures.parse_measure(name)
    except (NameError, ValueError, SyntaxError, TypeError):
        return None


def computable(measure: Measure) -> bool:
    """Whether an installed provider of ir-measures' default pipeline computes ``measure``."""
    providers = ir_measures.DefaultPipeline.providers
    return any(provider.supports(measure) and provider.is_available() for provider in providers)


def per_query(
    table: pa.Table, qrels: pa.Table | None, qids: np.ndarray, measures: Sequence[Measure]
) -> dict[Measure, np.ndarray]:
    """Each measure's value of every query of ``qids``, in their order. ``qrels`` (qid, cid, label)
    judge the table (ir-measures' TREC run); without them its labels are its qrels (a predictions file)."""
    index = pd.Index(qids)
    judged = (table if qrels is None else qrels).select(["qid", "cid", "label"])
    judged = judged.filter(pc.is_in(judged["qid"], value_set=pa.array(qids)))
    trec_run = table.filter(pc.is_in(table["qid"], value_set=pa.array(qids)))
    found = ir_measures.iter_calc(
        list(measures),
        pd.DataFrame(
            {
                "query_id": _numbered(index, judged),
                "doc_id": judged["cid"].to_pylist(),
                "relevance": judged["label"].to_numpy().astype(np.int64),
            }
        ),
        pd.DataFrame(
            {
                "query_id": _numbered(index, trec_run),
                "doc_id": trec_run["cid"].to_pylist(),
                "score": trec_run["prob_mean"].to_numpy().astype(np.float64),
            }
        ),
    )
    values = {measure: np.full(len(qids), measure.DEFAULT, dtype=np.float64) for measure in measures}
    for metric in found:
        values[metric.measure][int(metric.query_id)] = metric.value
    return values


def _numbered(index: pd.Index, rows: pa.Table) -> np.ndarray:
    """The rows' query ids as their position in ``index``, written as text: gdeval (ERR@k) reads
    only numeric topic ids, and a position keys every provider's output back to its query."""
    return index.get_indexer(rows["qid"].to_numpy(zero_copy_only=False)).astype(str)
