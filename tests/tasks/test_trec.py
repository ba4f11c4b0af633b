"""TREC topics (SGML and TSV) and qrels over a BEIR-style corpus, on fixture files."""

import json
from pathlib import Path

import pytest

from rankuq.errors import RankuqError
from rankuq.tasks.trec import Robust04, TrecDl19, read_topics

SGML = """<top>
<num> Number: 301
<title> International Organized
Crime

<desc> Description:
Identify organizations that participate in international criminal activity.
</top>

<top>
<num> Number: 302
<title> Poliomyelitis and Post-Polio
<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?
</top>
"""
QRELS = "301 0 FBIS3-10082 1\n301 0 FBIS3-10169 0\n302 0 FT934-4848 2\n"
CORPUS = ["FBIS3-10082", "FBIS3-10169", "FT934-4848", "LA0101-1", "LA0101-2", "LA0101-3"]


def write(root: Path, folder: str = "robust04", topics: str = SGML, qrels: str = QRELS) -> None:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "topics.txt").write_text(topics)
    (path / "qrels.txt").write_text(qrels)
    lines = [json.dumps({"_id": doc, "title": "", "text": f"document {doc} crime polio"}) for doc in CORPUS]
    (path / "corpus.jsonl").write_text("\n".join(lines) + "\n")


def test_sgml_titles_are_the_queries(tmp_path: Path) -> None:
    write(tmp_path)
    pool = Robust04().pool("test", tmp_path)
    assert pool.qids == ["301", "302"]
    assert pool.contexts == [["International Organized Crime"], ["Poliomyelitis and Post-Polio"]]
    assert [(pool.cids[row], label) for row, label in pool.judged[1]] == [("FT934-4848", 2)]
    assert Robust04.splits == ("test",) and Robust04.files[0] == "robust04/topics.txt"


def test_tsv_topics(tmp_path: Path) -> None:
    write(tmp_path, "trec_dl19", topics="301\tmedicare part b\n302\twhat is polio\n")
    assert TrecDl19().pool("test", tmp_path).contexts == [["medicare part b"], ["what is polio"]]


@pytest.mark.parametrize(
    ("topics", "qrels", "message"),
    [
        (
            SGML,
            QRELS + "302 0 MISSING-1 1\n",
            r"qrels\.txt: line 4: document id MISSING-1 is not in the corpus",
        ),
        (SGML, QRELS + "303 0 FT934-4848 1\n", r"qrels\.txt: line 4: query id 303 is not in .*topics\.txt"),
        (SGML, QRELS + "302 FT934-4848 1\n", r"qrels\.txt, line 4: expected 4 whitespace-separated fields"),
        (SGML, "", r"qrels\.txt: no lines to read"),
        ("<top>\n<title> no number\n</top>\n", QRELS, r"topics\.txt: line 1: topic without <num>"),
        (
            "<top>\n<num> Number: 301\n<title>\n<desc> d\n</top>\n",
            QRELS,
            r"line 1: empty <title> of topic 301",
        ),
        ("301 no tab here\n", QRELS, r"topics\.txt: line 1: expected qid<TAB>query"),
        ("\n\n", QRELS, r"topics\.txt: no topics"),
    ],
)
def test_bad_files(tmp_path: Path, topics: str, qrels: str, message: str) -> None:
    write(tmp_path, topics=topics, qrels=qrels)
    with pytest.raises(RankuqError, match=message):
        Robust04().pool("test", tmp_path)


def test_only_a_test_split(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"unknown split 'train' for task robust04; valid splits: test"):
        Robust04().pool("train", tmp_path)


def test_read_topics_gzip_error(tmp_path: Path) -> None:
    path = tmp_path / "topics.txt.gz"
    path.write_bytes(b"not gzip")
    with pytest.raises(RankuqError, match=r"topics\.txt\.gz: not a readable gzip UTF-8 text file"):
        read_topics(path)
