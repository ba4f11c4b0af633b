"""Writing TREC runs: read back (tasks.trec_format) as the same scores, ranked as trec_eval ranks
rankuq's order."""

from pathlib import Path

import numpy as np
import pytest

from rankuq.bench.evaluation.trec import write_trec_run
from rankuq.errors import RankuqError
from rankuq.tasks.trec_format import read_trec_run


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_written_run_reads_back_as_the_same_scores_ranked_as_rankuq_ranks(wikiqa, tmp_path):
    table = wikiqa.slice(0, 40)  # real WikiQA candidates with the stand-in ranker's probabilities
    write_trec_run(table, tmp_path / "run.txt", tag="mine")
    lines = [line.split() for line in (tmp_path / "run.txt").read_text().splitlines()]
    assert (
        len(lines) == 40 and {line[1] for line in lines} == {"Q0"} and {line[5] for line in lines} == {"mine"}
    )
    for qid in set(table["qid"].to_pylist()):
        ranked = [line for line in lines if line[0] == qid]
        assert [int(line[3]) for line in ranked] == list(range(1, len(ranked) + 1))
        scores = [float(line[4]) for line in ranked]
        assert scores == sorted(scores, reverse=True)
    back = read_trec_run(tmp_path / "run.txt")
    written = dict(zip(back["cid"].to_pylist(), back["score"].to_pylist(), strict=True))
    expected = dict(zip(table["cid"].to_pylist(), table["prob_mean"].to_pylist(), strict=True))
    assert written == expected  # exact float64 text: not one score rounded


def test_tied_scores_are_written_in_descending_docno_order_as_trec_eval_ranks_them(tmp_path):
    from rankuq.bench.predictions import predictions_table

    table = predictions_table(["q", "q", "q"], ["a", "c", "b"], np.zeros(3), np.full((3, 1), 0.5))
    write_trec_run(table, tmp_path / "run")
    assert [line.split()[2] for line in (tmp_path / "run").read_text().splitlines()] == ["c", "b", "a"]
    with pytest.raises(RankuqError, match=r"--write-run .*: cannot write \(.*\); check the folder"):
        write_trec_run(table, _write(tmp_path / "afile", "x") / "run")
