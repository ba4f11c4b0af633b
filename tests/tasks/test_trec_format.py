"""TREC run and qrels files, the one reader of each (tasks.trec_format): one error naming the file and
line, repeats kept last with a warning or refused, line numbers and TREC's negative grades on request."""

import codecs
import gzip
import logging

import pyarrow as pa
import pytest

from rankuq.errors import RankuqError
from rankuq.tasks import trec_format as trec
from rankuq.tasks.trec_format import read_trec_qrels, read_trec_run

from ..files import write_file

RUN = "q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.4 t\nq2 Q0 d3 1 0.8 t\nq2 Q0 d4 2 0.7 t\n"


def test_a_run_is_its_qids_docnos_and_scores_whatever_the_ranks_say(tmp_path):
    table = read_trec_run(write_file(tmp_path / "run", "q1 Q0 d1 7 0.25 t\n\nq1\tQ0  d2 1 -3e2 t\r\n"))
    assert table.schema == pa.schema([("qid", pa.string()), ("cid", pa.string()), ("score", pa.float64())])
    assert table.to_pydict() == {"qid": ["q1", "q1"], "cid": ["d1", "d2"], "score": [0.25, -300.0]}


def test_qrels_are_judgements_of_0_to_127(tmp_path):
    qrels = read_trec_qrels(write_file(tmp_path / "qrels", "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 127\n"))
    assert qrels.schema.field("label").type == pa.int8()
    assert qrels.to_pydict() == {"qid": ["q1", "q1", "q2"], "cid": ["d1", "d2", "d3"], "label": [2, 0, 127]}
    with pytest.raises(RankuqError, match=r"line 2: relevance 128 is outside 0..127; rescale the grades"):
        read_trec_qrels(write_file(tmp_path / "qrels", "q1 0 d1 2\nq1 0 d2 128\n"))


def test_a_judgement_given_twice_keeps_the_last_with_one_warning_or_is_refused(tmp_path, caplog):
    path = write_file(tmp_path / "qrels", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n")
    with caplog.at_level(logging.WARNING):
        kept = read_trec_qrels(path)
    assert kept.to_pydict() == {"qid": ["q1", "q1"], "cid": ["d2", "d1"], "label": [0, 0]}
    (warning,) = [record.getMessage() for record in caplog.records]
    assert warning.startswith(
        f"{path}, line 3: docno d1 appears again for qid q1 (first on line 1); 1 repeated"
    )
    with pytest.raises(RankuqError, match=r"line 3: docno d1 appears again .*; keep one line per"):
        read_trec_qrels(path, strict=True)


def test_a_gz_run_with_a_bom_reads_the_same(tmp_path):
    gz = write_file(tmp_path / "run.gz", gzip.compress(codecs.BOM_UTF8 + RUN.encode()))
    assert read_trec_run(gz).equals(read_trec_run(write_file(tmp_path / "run", RUN)))


def test_a_file_past_the_size_bound_is_refused_while_read(tmp_path, monkeypatch):
    monkeypatch.setattr(trec, "MAX_TREC_BYTES", 1000)
    monkeypatch.setattr(trec, "_CHUNK_BYTES", 100)
    with pytest.raises(RankuqError, match=r"run: more than 0 MiB of text"):
        read_trec_run(write_file(tmp_path / "run", RUN * 100))


def test_line_numbers_and_negative_grades_on_request(tmp_path):
    path = write_file(tmp_path / "qrels", "q1 0 d1 -2\n\nq1 0 d2 3\n")
    assert read_trec_qrels(path, lines=True, negative_as_zero=True).to_pydict() == {
        "qid": ["q1", "q1"], "cid": ["d1", "d2"], "label": [0, 3], "line": [1, 3]
    }  # fmt: skip
    with pytest.raises(RankuqError, match=r"qrels, line 1: relevance -2 is outside 0..127; map negative"):
        read_trec_qrels(path)
    run = read_trec_run(write_file(tmp_path / "run", RUN), lines=True)
    assert run.column_names == ["qid", "cid", "score", "line"] and run["line"].to_pylist() == [1, 2, 3, 4]
