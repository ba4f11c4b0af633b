"""Candidate lists of size n cut from a pool: the tasks API behind every shard.

``build_lists(pool, strategy, n, seed, variant)`` returns contract-1 rows. Per query it keeps
some relevant candidates (graded labels kept), fills the list with the strategy's negatives, never
a relevant one (by cid or by identical text), and shuffles the list so position says nothing about
relevance. A query that cannot fill exactly ``n`` candidates is dropped; drops are counted in one
log line. All draws come from ``query_rng(seed, qid, …)``: the same seed gives the same lists.

Variants:
- ``standard``: up to ``max(1, n // 2)`` relevant candidates (all, when fewer), the rest negatives;
  queries without a relevant candidate are kept as natural NOTA lists (e.g. WikiQA's
  unanswerable questions).
- ``imbalance``: exactly 1 relevant and ``n - 1`` negatives (Penha & Hauff, 2021, Figure 2: #non-rel = n - 1).
- ``nota``: Penha & Hauff (2021, §4.2) on answerable queries: for a seeded half the relevant candidates are
  removed (``nota``), for the other half one negative is. Both halves hold ``n`` candidates — 1
  relevant + n-1 negatives, or n negatives — so list length never gives the label away.
- ``retrieved``: each query's top ``n`` of the strategy's retrieval as it ranks them, labelled by the
  judgments (unjudged: 0); nothing is put in or taken out, and a query none of whose relevant
  documents is retrieved keeps its list. The protocol BEIR and MTEB report for a reranker (Thakur
  et al., 2021, §5: BM25's top 100 reranked): such lists are measured against the split's full
  judgments (``tasks.shards.read_judgments``), not their own labels. A TREC run strategy's lists are
  always the run's, as here (variant standard or retrieved).
"""

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankuq.contract import CANDIDATE_SCHEMA, EXTRA_COLUMNS
from rankuq.errors import RankuqError
from rankuq.tasks import negatives
from rankuq.tasks.negatives import query_rng
from rankuq.tasks.pool import Pool

logger = logging.getLogger(__name__)

DEFAULT_N = 10
VARIANTS = ("standard", "imbalance", "nota", "retrieved")
# Spare retrieval depth: identical texts under different cids are skipped, and still fill n.
SPARE = 8


def check_settings(n: int | None, seed: int, variant: str) -> None:
    """Reject settings that cannot give lists, naming the key and its valid values."""
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 2):
        raise RankuqError(f"n is {n!r}; set it to an integer of at least 2 (candidates per list)")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise RankuqError(f"seed is {seed!r}; set it to a non-negative integer")
    if variant not in VARIANTS:
        raise RankuqError(f"unknown variant '{variant}'; valid variants: {', '.join(VARIANTS)}")


def default_strategy(native: bool) -> str:
    """The dataset's own lists where it has them, else BM25 negatives (Penha & Hauff, 2021, train on
    them)."""
    return "native" if native else "bm25"


def resolve_strategy(pool: Pool, strategy: str | None) -> str:
    """``strategy`` (default: ``default_strategy``), checked against the pool."""
    name = strategy or default_strategy(pool.native)
    check_native(name, pool.native, f"{pool.source}: {pool.task}/{pool.split}")
    return name


def check_native(strategy: str, native: bool, where: str) -> None:
    """Reject an unknown strategy, or one that needs native lists where there are none."""
    if negatives.get(strategy).needs_native and not native:
        valid = [name for name in negatives.names() if not negatives.get(name).needs_native]
        raise RankuqError(
            f"{where} has no native candidate lists; "
            f"pick a negative-sampling strategy from {', '.join(valid)}"
        )


def resolve_n(strategy: str, n: int | None, variant: str) -> int | None:
    """The list size: None (whole lists) only for standard lists of judged candidates (native,
    judged), else ``n`` or 10."""
    if n is None and not (negatives.get(strategy).judged_lists and variant == "standard"):
        return DEFAULT_N
    return n


def count_rows(pool: Pool, strategy: str, n: int | None, variant: str, include_nota: bool) -> tuple[int, int]:
    """(candidate rows, answerable queries) that ``build_lists`` would cut from ``pool``, without
    sampling a negative: whole native lists keep their judged candidates, other lists hold at most
    ``n`` (fewer only where a corpus is smaller); a query without a relevant candidate counts only with
    ``include_nota`` and a standard list (the imbalance and nota variants drop it, as ``_plan`` does)
    and always in a retrieved one.
    ``rankuq run --plan`` sizes unbuilt lists with it."""
    size = resolve_n(strategy, n, variant)
    answerable = [any(label > 0 for _, label in judged) for judged in pool.judged]
    unanswerable_kept = variant == "retrieved" or (include_nota and variant == "standard")
    kept = [q for q, has in enumerate(answerable) if has or unanswerable_kept]
    if size is None:
        return sum(len(pool.judged[q]) for q in kept), sum(answerable)
    return len(kept) * min(size, len(pool.cids)), sum(answerable)


def build_lists(
    pool: Pool,
    strategy: str | None = None,
    n: int | None = None,
    seed: int = 0,
    variant: str = "standard",
    *,
    cache_dir: Path | None = None,
) -> pa.Table:
    """Contract-1 lists of ``pool``; ``n=None`` keeps native (or judged) lists whole (10 for the
    other strategies).

    ``cache_dir`` is where a strategy may keep intermediates (the dense strategy's embeddings).
    """
    check_settings(n, seed, variant)
    name = resolve_strategy(pool, strategy)
    n = resolve_n(name, n, variant)
    if n is None:
        return _whole_judged_lists(pool, name)
    strategy_class = negatives.get(name)
    if strategy_class.from_trec_run or variant == "retrieved":
        return _retrieved_lists(pool, strategy_class(cache_dir), n, seed, variant)
    if len(pool.cids) < n:
        raise RankuqError(
            f"{pool.source}: the candidate pool of {pool.task}/{pool.split} holds {len(pool.cids)} "
            f"candidates, fewer than n={n}; lower n"
        )
    plan, drops = _plan(pool, n, seed, variant)
    queries = np.array(sorted(plan), dtype=np.int64)
    depth = np.array([n + len(_relevant(pool, q)) + SPARE for q in queries], dtype=np.int64)
    ranked = negatives.get(name)(cache_dir).candidates(pool, queries, depth, seed) if queries.size else []
    lists = {}
    for q, candidates in zip(queries, ranked, strict=True):
        chosen, need = plan[int(q)]
        picked = _pick_negatives(pool, int(q), chosen, candidates, need)
        if picked is None:
            drops[f"with fewer than {n} candidates"] += 1
        else:
            lists[int(q)] = picked
    _log(pool, name, n, variant, len(lists), drops)
    return _lists_table(pool, lists, name, seed)


def _retrieved_lists(pool: Pool, strategy: negatives.Strategy, n: int, seed: int, variant: str) -> pa.Table:
    """Each query's top ``n`` of the strategy's ranking (a first-stage TREC run, or BM25's or the
    dense retriever's over the whole pool), labelled by the pool's judgments (unjudged: 0)."""
    if variant not in ("standard", "retrieved"):
        raise RankuqError(
            f"variant '{variant}' adds or removes relevant candidates; a run's lists are kept as the run "
            "ranks them: use variant standard or retrieved with a run strategy"
        )
    queries = np.arange(len(pool.qids))
    ranked = strategy.candidates(pool, queries, np.full(queries.size, n), seed)
    lists = {}
    for q, rows in zip(queries.tolist(), ranked, strict=True):
        labels = dict(pool.judged[q])
        if rows.size:
            lists[q] = [(row, max(labels.get(row, 0), 0)) for row in rows.tolist()]
    missing = "not in the run" if strategy.from_trec_run else "with nothing retrieved"
    drops = Counter({missing: len(pool.qids) - len(lists)})
    _log(pool, strategy.name, n, variant, len(lists), drops)
    return _lists_table(pool, lists, strategy.name, seed)


def _relevant(pool: Pool, q: int) -> list[tuple[int, int]]:
    return [(row, label) for row, label in pool.judged[q] if label > 0]


def _plan(
    pool: Pool, n: int, seed: int, variant: str
) -> tuple[dict[int, tuple[list[tuple[int, int]], int]], Counter[str]]:
    """Per kept query: the relevant (row, label) pairs its list holds and how many negatives it needs."""
    drops: Counter[str] = Counter()
    queries: Sequence[int] = range(len(pool.qids))
    nota: set[int] = set()
    if variant != "standard":
        queries = [q for q in queries if _relevant(pool, q)]
        drops["without a relevant candidate"] = len(pool.qids) - len(queries)
    if variant == "nota":
        order = query_rng(seed, f"{pool.task}/{pool.split}", "nota").permutation(len(queries))
        nota = {queries[i] for i in order[: len(queries) // 2]}
    plan = {}
    for q in queries:
        relevant = _relevant(pool, q)
        # standard: up to half the list relevant; imbalance and nota: one (none on the NOTA half)
        keep = min(len(relevant), max(1, n // 2)) if variant == "standard" else int(q not in nota)
        order = query_rng(seed, pool.qids[q], "relevant").permutation(len(relevant))
        plan[q] = ([relevant[i] for i in order[:keep]], n - keep)
    return plan, drops


def _pick_negatives(
    pool: Pool, q: int, chosen: list[tuple[int, int]], candidates: np.ndarray, need: int
) -> list[tuple[int, int]] | None:
    """``chosen`` plus ``need`` negatives in preference order, or None when too few are left.

    Skipped: the query's relevant candidates, any candidate whose text equals a relevant one, and
    repeated texts (two cids with one text would be the same candidate twice).
    """
    relevant = _relevant(pool, q)
    excluded = {row for row, _ in relevant}
    seen = {pool.texts[row] for row, _ in relevant}
    picked = list(chosen)
    for row in candidates.tolist():
        if len(picked) == len(chosen) + need:
            break
        text = pool.texts[row]
        if row in excluded or text in seen:
            continue
        seen.add(text)
        picked.append((row, 0))
    return picked if len(picked) == len(chosen) + need else None


def _log(pool: Pool, name: str, n: int, variant: str, kept: int, drops: Counter[str]) -> None:
    dropped = {reason: count for reason, count in drops.items() if count}
    if dropped:
        reasons = "; ".join(f"{count} {reason}" for reason, count in dropped.items())
        logger.warning(
            "%s/%s (%s, n=%d, %s): kept %d of %d queries; dropped %s",
            *(pool.task, pool.split, name, n, variant, kept, len(pool.qids), reasons),
        )


def _lists_table(pool: Pool, lists: dict[int, list[tuple[int, int]]], ns: str, seed: int) -> pa.Table:
    """Rows of each list in query order, shuffled within the list."""
    queries, rows, labels = [], [], []
    for q in sorted(lists):
        members = lists[q]
        for i in query_rng(seed, pool.qids[q], "order").permutation(len(members)):
            queries.append(q)
            rows.append(members[i][0])
            labels.append(members[i][1])
    return _table(pool, np.array(queries, np.int64), np.array(rows, np.int64), np.array(labels), ns)


def _whole_judged_lists(pool: Pool, ns: str) -> pa.Table:
    """Every query's judged candidates as the files give them, in file order."""
    queries = np.repeat(np.arange(len(pool.qids)), [len(judged) for judged in pool.judged])
    pairs = [pair for judged in pool.judged for pair in judged]
    rows = np.array([row for row, _ in pairs], dtype=np.int64)
    labels = np.array([label for _, label in pairs])
    return _table(pool, queries, rows, labels, ns)


def _table(pool: Pool, queries: np.ndarray, rows: np.ndarray, labels: np.ndarray, ns: str) -> pa.Table:
    """Contract-1 columns (plus the pool's extra columns) from row-aligned indices."""
    labels = labels.astype(np.int8)
    # A list is NOTA when none of its rows is relevant.
    answered = np.zeros(len(pool.qids), dtype=bool)
    answered[queries[labels > 0]] = True
    size = queries.size
    take = pa.array(queries)
    columns = {
        "qid": pa.array(pool.qids, pa.string()).take(take),
        "context": pa.array(pool.contexts, pa.list_(pa.string())).take(take),
        "cid": pa.array(pool.cids, pa.string()).take(pa.array(rows)),
        "text": pa.array(pool.texts, pa.string()).take(pa.array(rows)),
        "label": pa.array(labels),
        "task": pa.array([pool.task] * size, pa.string()),
        "split": pa.array([pool.split] * size, pa.string()),
        "ns": pa.array([ns] * size, pa.string()),
        "nota": pa.array(~answered[queries]),
    }
    fields = list(CANDIDATE_SCHEMA)
    for name, values in pool.extras.items():
        field = EXTRA_COLUMNS.field(name)
        columns[name] = pa.array(values, field.type).take(take)
        fields.append(field)
    return pa.table(columns, schema=pa.schema(fields))
