"""Lists of size n cut from a pool: sizes, labels, exclusion of relevant negatives, variants, seeds."""

import logging
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankuq import tasks
from rankuq.contract import CANDIDATE_SCHEMA, read_shards, validate_candidates
from rankuq.errors import RankuqError
from rankuq.tasks import negatives
from rankuq.tasks.lists import VARIANTS, build_lists, count_rows
from rankuq.tasks.pool import Pool
from rankuq.tasks.shards import build_shards

SAMPLED = ["random", "bm25", "dense"]


def by_query(table: pa.Table) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for row in table.to_pylist():
        groups.setdefault(row["qid"], []).append(row)
    return groups


def relevant_of(pool: Pool) -> dict[str, dict[str, int]]:
    """qid → {cid: label} of its relevant candidates."""
    return {
        qid: {pool.cids[row]: label for row, label in judged if label > 0}
        for qid, judged in zip(pool.qids, pool.judged, strict=True)
    }


def assert_lists_sound(table: pa.Table, pool: Pool, n: int) -> None:
    """Exactly n candidates, no repeated text, labels from the judgments, nota iff no relevant row."""
    relevant = relevant_of(pool)
    relevant_texts = {qid: {pool.texts[pool.cids.index(c)] for c in cids} for qid, cids in relevant.items()}
    validate_candidates(table, "lists")
    for qid, rows in by_query(table).items():
        assert len(rows) == n
        assert len({row["text"] for row in rows}) == n
        for row in rows:
            assert row["label"] == relevant[qid].get(row["cid"], 0)
            if row["label"] == 0:  # a negative is never a relevant candidate, nor its text
                assert row["cid"] not in relevant[qid]
                assert row["text"] not in relevant_texts[qid]
        assert all(row["nota"] == (max(r["label"] for r in rows) == 0) for row in rows)


@pytest.mark.parametrize("strategy", SAMPLED)
@pytest.mark.parametrize("variant", VARIANTS)
def test_sampled_lists_sound(
    make_pool: Callable[..., Pool], stub_encoder: list[int], strategy: str, variant: str
) -> None:
    pool = make_pool()
    table = build_lists(pool, strategy, n=6, seed=3, variant=variant)
    assert_lists_sound(table, pool, 6)
    assert set(table.column("ns").to_pylist()) == {strategy}


def test_standard_keeps_up_to_half_relevant_and_grades(make_pool: Callable[..., Pool]) -> None:
    pool = make_pool()
    table = build_lists(pool, "random", n=4)
    relevant = relevant_of(pool)
    assert len(by_query(table)) == len(pool.qids)  # NOTA queries stay, as n negatives
    for qid, rows in by_query(table).items():
        kept = [row for row in rows if row["label"] > 0]
        assert len(kept) == min(len(relevant[qid]), 2)
    assert set(table.column("label").to_pylist()) == {0, 1, 2}


def test_imbalance_has_one_relevant_and_drops_unanswerable(
    make_pool: Callable[..., Pool], caplog: pytest.LogCaptureFixture
) -> None:
    pool = make_pool()
    with caplog.at_level(logging.WARNING, logger="rankuq.tasks.lists"):
        table = build_lists(pool, "bm25", n=3, variant="imbalance")
    groups = by_query(table)
    assert all(sum(row["label"] > 0 for row in rows) == 1 for rows in groups.values())
    assert len(groups) == 8  # 4 of the 12 queries have no relevant document
    assert "kept 8 of 12 queries; dropped 4 without a relevant candidate" in caplog.text


def test_nota_variant_halves(make_pool: Callable[..., Pool]) -> None:
    pool = make_pool(queries=40)
    table = build_lists(pool, "random", n=5, seed=1, variant="nota")
    groups = by_query(table)
    nota = {qid for qid, rows in groups.items() if rows[0]["nota"]}
    assert len(groups) == 27 and len(nota) == 13  # 27 answerable queries, half made NOTA
    for qid, rows in groups.items():
        assert sum(row["label"] > 0 for row in rows) == (0 if qid in nota else 1)
    again = build_lists(pool, "random", n=5, seed=1, variant="nota")
    assert again.equals(table)
    other = build_lists(pool, "random", n=5, seed=2, variant="nota")
    assert {q for q, rows in by_query(other).items() if rows[0]["nota"]} != nota


def test_same_seed_same_lists_other_seed_other_order(make_pool: Callable[..., Pool]) -> None:
    pool = make_pool()
    first = build_lists(pool, "bm25", n=6, seed=0)
    assert build_lists(pool, "bm25", n=6, seed=0).equals(first)
    second = build_lists(pool, "bm25", n=6, seed=1)
    assert not second.equals(first)
    assert sorted(second.column("cid").to_pylist()) == sorted(first.column("cid").to_pylist())


def test_lists_are_shuffled(make_pool: Callable[..., Pool]) -> None:
    """Relevant candidates must not sit first: R@k on list order would be meaningless."""
    table = build_lists(make_pool(queries=60), "bm25", n=6)
    firsts = [rows[0]["label"] > 0 for rows in by_query(table).values()]
    assert 0 < sum(firsts) < len(firsts)


def test_native_whole_lists_in_file_order(make_pool: Callable[..., Pool]) -> None:
    pool = make_pool(native=True)
    table = build_lists(pool)
    assert table.schema == CANDIDATE_SCHEMA
    assert set(table.column("ns").to_pylist()) == {"native"}
    expected = [pool.cids[row] for judged in pool.judged for row, _ in judged]
    assert table.column("cid").to_pylist() == expected


def test_native_with_n_drops_short_lists(
    make_pool: Callable[..., Pool], caplog: pytest.LogCaptureFixture
) -> None:
    pool = make_pool(native=True)
    with caplog.at_level(logging.WARNING, logger="rankuq.tasks.lists"):
        table = build_lists(pool, "native", n=10)
    # NOTA queries have 8 candidates, others 9–11 (1–3 relevant + 8): kept when at least 10.
    kept = {qid for qid, judged in zip(pool.qids, pool.judged, strict=True) if len(judged) >= 10}
    assert set(by_query(table)) == kept
    assert_lists_sound(table, pool, 10)
    assert f"dropped {len(pool.qids) - len(kept)} with fewer than 10 candidates" in caplog.text


def test_default_strategy_is_bm25_without_native_lists(make_pool: Callable[..., Pool]) -> None:
    table = build_lists(make_pool(), n=4)
    assert set(table.column("ns").to_pylist()) == {"bm25"}


def test_graded_negatives_never_include_judged_relevant_real_clariq() -> None:
    pool = tasks.get("clariq")().pool("dev", tasks.data_root())
    table = build_lists(pool, "bm25", n=10)
    assert_lists_sound(table, pool, 10)
    assert table.num_rows == 500
    assert set(table.column("clarification_need").to_pylist()) <= {1, 2, 3, 4}


def test_real_wikiqa_natural_nota_kept() -> None:
    pool = tasks.get("wikiqa")().pool("dev", tasks.data_root())
    table = build_lists(pool, "random", n=10)
    assert_lists_sound(table, pool, 10)
    nota = pc.unique(pc.filter(table.column("qid"), table.column("nota")))
    assert len(nota) == 296 - 126  # WikiQA's unanswerable dev questions


@pytest.mark.parametrize(
    ("variant", "include_nota"),
    [("standard", False), ("standard", True), ("imbalance", False), ("imbalance", True), ("nota", True)],
)
def test_count_rows_matches_the_built_lists_on_real_wikiqa(variant: str, include_nota: bool) -> None:
    """--plan's count equals the lists as built (the plan always keeps the nota variant's NOTA half):
    the imbalance and nota variants drop WikiQA's 170 unanswerable dev questions whatever
    include_nota says (they were counted before)."""
    pool = tasks.get("wikiqa")().pool("dev", tasks.data_root())
    table = build_lists(pool, "random", n=10, variant=variant)
    if not include_nota:
        table = table.filter(pc.invert(table.column("nota")))
    rows, answerable = count_rows(pool, "random", 10, variant, include_nota)
    assert (rows, answerable) == (table.num_rows, 126)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 1}, r"n is 1; set it to an integer of at least 2"),
        ({"n": 2.5}, r"n is 2\.5"),
        ({"seed": -1}, r"seed is -1; set it to a non-negative integer"),
        ({"variant": "skewed"}, r"unknown variant 'skewed'; valid variants: standard, imbalance, nota"),
        ({"strategy": "tfidf"}, r"strategy 'tfidf'; valid negative-sampling strategies: .*bm25, dense"),
        ({"strategy": "native"}, r"synthetic\.tsv: synthetic/test has no native candidate lists; .*random"),
        (
            {"n": 61},
            r"synthetic\.tsv: the candidate pool of synthetic/test holds 60 candidates, fewer than n=61",
        ),
    ],
)
def test_bad_settings(make_pool: Callable[..., Pool], kwargs: dict, message: str) -> None:
    with pytest.raises(RankuqError, match=message):
        build_lists(make_pool(), **kwargs)


def test_strategies_registered() -> None:
    assert negatives.names() == ["bm25", "dense", "judged", "native", "random", "run"]


def test_trec_run_lists_are_its_top_n_as_they_are(
    make_pool: Callable[..., Pool], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Relevant documents the run missed stay missing, unjudged ones are 0; q0 has no run lines."""
    pool = make_pool()
    lines = [f"q{q} Q0 d{d} {d} {-d} sys" for q in range(1, 5) for d in range(5)]
    run = tmp_path / "run.trec"
    run.write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        table = build_lists(pool, f"run:{run}", n=3)
    assert "kept 4 of 12 queries; dropped 8 not in the run" in caplog.text
    validate_candidates(table, "run lists")
    judged = {
        qid: {pool.cids[row]: label for row, label in j}
        for qid, j in zip(pool.qids, pool.judged, strict=True)
    }
    for qid, rows in by_query(table).items():
        assert sorted(row["cid"] for row in rows) == ["d0", "d1", "d2"]  # the top 3 by score
        assert all(row["label"] == judged[qid].get(row["cid"], 0) for row in rows)
        assert {row["ns"] for row in rows} == {f"run:{run}"}
    with pytest.raises(
        RankuqError, match=r"variant 'imbalance' .* use variant standard or retrieved with a run strategy"
    ):
        build_lists(pool, f"run:{run}", n=3, variant="imbalance")


def test_run_shards_rerank_a_run_over_real_wikiqa(tmp_path: Path) -> None:
    """A run of three WikiQA dev questions (their sentences in reverse file order) → lists of its top 4."""
    root = tasks.data_root()
    pool = tasks.get("wikiqa")().pool("dev", root)
    lines = [
        f"{pool.qids[q]} Q0 {pool.cids[row]} {rank} {100 - rank} bm25"
        for q in range(3)
        for rank, (row, _) in enumerate(reversed(pool.judged[q]), start=1)
    ]
    run = tmp_path / "dev.trec"
    run.write_text("\n".join(lines) + "\n")
    path = build_shards("wikiqa", "dev", root=root, cache_dir=tmp_path / "cache", strategy=f"run:{run}", n=4)
    table = read_shards(path)
    assert table.column("qid").unique().to_pylist() == pool.qids[:3]
    for q, (qid, rows) in enumerate(by_query(table).items()):
        expected = dict(list(reversed(pool.judged[q]))[:4])
        assert {pool.cids.index(row["cid"]): row["label"] for row in rows} == expected, qid
    run.write_text("\n".join(lines[1:]) + "\n")  # another run: another cache entry
    assert (
        build_shards("wikiqa", "dev", root=root, cache_dir=tmp_path / "cache", strategy=f"run:{run}", n=4)
        != path
    )
