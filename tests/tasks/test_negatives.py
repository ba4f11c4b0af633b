"""The negative-sampling strategies on their own: what each ranks first, determinism, registry."""

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rankuq import tasks
from rankuq.errors import RankuqError
from rankuq.lexical import BM25Index
from rankuq.tasks import negatives
from rankuq.tasks.negatives import query_rng
from rankuq.tasks.pool import Pool, PoolBuilder


def tiny_pool() -> Pool:
    builder = PoolBuilder("tiny", "dev", __file__, native=True)  # type: ignore[arg-type]
    texts = ["red apples are sweet", "green pears", "the red car is fast", "blue sky", "apples and pears"]
    rows = [builder.candidate(f"d{i}", text) for i, text in enumerate(texts)]
    builder.query("q0", ["sweet red apples"], {rows[0]: 1, rows[1]: 0, rows[3]: 0})
    builder.query("q1", ["a fast car"], {rows[2]: 2, rows[4]: 0})
    return builder.build()


def ranked(strategy: str, pool: Pool, depth: int = 5, seed: int = 0) -> list[list[int]]:
    queries = np.arange(len(pool.qids))
    out = negatives.get(strategy)().candidates(pool, queries, np.full(queries.size, depth), seed)
    return [rows.tolist() for rows in out]


def test_native_gives_the_judged_negatives_only() -> None:
    first, second = ranked("native", tiny_pool())
    assert sorted(first) == [1, 3] and second == [4]


def test_random_draws_distinct_rows_deterministically() -> None:
    pool = tiny_pool()
    draws = ranked("random", pool, depth=4, seed=7)
    assert all(len(set(rows)) == 4 and set(rows) <= set(range(5)) for rows in draws)
    assert ranked("random", pool, depth=4, seed=7) == draws
    assert any(ranked("random", pool, depth=4, seed=s) != draws for s in range(1, 5))


def test_random_depth_capped_by_corpus() -> None:
    assert all(len(rows) == 5 for rows in ranked("random", tiny_pool(), depth=50))


def test_bm25_ranks_lexical_matches_first() -> None:
    first, second = ranked("bm25", tiny_pool())
    assert first[0] == 0 and second[0] == 2  # the caller skips them: they are relevant


def test_dense_ranks_nearest_first(stub_encoder: list[int]) -> None:
    first, second = ranked("dense", tiny_pool(), depth=3)
    assert first[0] == 0 and second[0] == 2
    assert len(first) == 3


@pytest.mark.parametrize("purpose", ["relevant", "order"])
def test_query_rng_depends_on_seed_query_and_purpose(purpose: str) -> None:
    draw: Callable[..., float] = lambda *key: query_rng(*key).random()  # noqa: E731
    assert draw(0, "q1", purpose) == draw(0, "q1", purpose)
    assert (
        len({draw(0, "q1", purpose), draw(1, "q1", purpose), draw(0, "q2", purpose), draw(0, "q1", "x")}) == 4
    )


def test_only_native_needs_native_lists() -> None:
    assert [name for name in negatives.names() if negatives.get(name).needs_native] == ["native"]
    assert all(negatives.get(name).description for name in negatives.names())


def test_dense_encodes_every_query_of_the_pool_once(tmp_path: Path, stub_encoder: list[int]) -> None:
    pool = tiny_pool()
    dense = negatives.get("dense")(tmp_path)
    first = dense.candidates(pool, np.array([1]), np.array([3]), seed=0)
    both = dense.candidates(pool, np.array([0, 1]), np.array([3, 3]), seed=0)
    assert stub_encoder == [5, 2]  # the corpus, then both queries: the subsets share the cache
    assert first[0].tolist() == both[1].tolist()


RUN = [
    "q0 Q0 d4 1 2.5 bm25",
    "q0 Q0 d0 2 2.5 bm25",  # a tie with d4: trec_eval puts the larger docno first
    "q0 Q0 d2 3 9.0 bm25",  # the rank column is ignored: the score puts d2 first
    "q0 Q0 d3 4 0.5 bm25",
    "q9 Q0 d1 1 1.0 bm25",  # a query of another split
]


def write_run(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "first-stage.trec"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_run_is_ranked_by_score_then_docno_descending(tmp_path: Path) -> None:
    ranking = negatives.ranked_documents(write_run(tmp_path, RUN))
    assert [doc for _, doc in ranking["q0"]] == ["d2", "d4", "d0", "d3"]
    assert ranking["q0"][0] == (3, "d2")  # with its line


def test_run_gives_the_top_depth_rows_of_each_query_in_the_run(tmp_path: Path) -> None:
    strategy = negatives.get(f"run:{write_run(tmp_path, RUN)}")
    assert strategy.from_trec_run and strategy.files == (tmp_path / "first-stage.trec",)
    assert ranked(strategy.name, tiny_pool(), depth=3) == [[2, 4, 0], []]  # q1 is not in the run


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [*RUN, "q0 Q0 d1 5 1.0"],
            r", line 6: expected 6 whitespace-separated fields 'qid Q0 docno rank score tag', got 5",
        ),
        ([*RUN, "q0 Q0 d1 5 nan x"], r", line 6: score nan is not finite; give every document a finite"),
        ([*RUN, "q0 Q0 d1 5 high x"], r", line 6: score 'high' is not a number; fix or drop the line"),
        ([*RUN, "q0 Q0 d99 5 1.0 x"], r": line 6: document d99 is not in the corpus of tiny/dev"),
        (RUN[-1:], r": none of its 1 queries is a query of tiny/dev"),
        ([""], r": no lines to read; expected lines of 'qid Q0 docno rank score tag'"),
    ],
)
def test_a_bad_run_names_the_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = write_run(tmp_path, lines)
    with pytest.raises(RankuqError, match=re.escape(str(path)) + message):
        ranked(f"run:{path}", tiny_pool(), depth=9)


def test_a_document_listed_twice_keeps_its_last_line_with_a_warning(tmp_path: Path, caplog) -> None:
    path = write_run(tmp_path, [*RUN, "q0 Q0 d4 5 99.0 x"])  # d4 again, now first
    with caplog.at_level("WARNING"):
        ranking = negatives.ranked_documents(path)
    assert ranking["q0"][0] == (6, "d4") and len(ranking["q0"]) == 4
    assert "line 6: docno d4 appears again for qid q0 (first on line 1)" in caplog.text


def test_a_run_strategy_names_an_existing_file(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"'run:nowhere.trec': run file not found: .*nowhere\.trec"):
        negatives.get("run:nowhere.trec")
    with pytest.raises(RankuqError, match=r"name the run file, e\.g\. run:"):
        negatives.get("run:")
    with pytest.raises(RankuqError, match=r"needs a run file: name it run:<path>"):
        ranked("run", tiny_pool())


def test_bm25_orders_equal_scores_by_corpus_row_on_clariq() -> None:
    """ClariQ's clarifying questions tie often (BM25 sees the same words in different questions): each
    query's candidates are its rows in (−score, row) order, a tie never left to the CPU's sort."""
    pool = tasks.get("clariq")().pool("test", tasks.data_root())
    queries = np.arange(len(pool.qids))
    ranked = negatives.get("bm25")().candidates(pool, queries, np.full(queries.size, 30), 0)
    index, tied = BM25Index(pool.texts), 0
    for text, rows in zip(negatives.query_texts(pool, queries), ranked, strict=True):
        scores = index.scores(text)
        assert rows.tolist() == sorted(range(len(scores)), key=lambda row: (-scores[row], row))[:30]
        tied += len(set(scores[rows].tolist())) < len(rows)
    assert tied > len(queries) // 2  # the order of ties is what this tests


# numpy's AVX-512 sorts off (X86_V4, AVX512_ICL, AVX512_SPR: numpy >= 2.4's names; absent ones are ignored)
NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
LISTS = (
    "import json\n"
    "from rankuq import tasks\n"
    "from rankuq.tasks.lists import build_lists\n"
    "pool = tasks.get('clariq')().pool('test', tasks.data_root())\n"
    "print(json.dumps(build_lists(pool, 'bm25', 10, 0, 'imbalance').column('cid').to_pylist()))\n"
)


def test_bm25_lists_are_the_same_whichever_sort_numpy_dispatches() -> None:
    """Before ties went by row, 23 of ClariQ's 61 test lists changed when numpy could not use its
    AVX-512 sort (rankuq/records/2026-11-30-bm25-ties-dispatch.json). On a CPU without AVX-512 both
    processes sort alike, and this checks that the lists of two processes agree."""

    def lists(env: dict[str, str]) -> list[str]:
        command = [sys.executable, "-c", LISTS]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        return list(json.loads(run.stdout.splitlines()[-1]))

    assert lists({**os.environ, "NPY_DISABLE_CPU_FEATURES": NO_AVX512}) == lists(dict(os.environ))
