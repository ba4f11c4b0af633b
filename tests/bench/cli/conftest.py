"""A BEIR folder made of real text: the first WikiQA test questions that have a correct sentence, the
sentences of their Wikipedia pages as the corpus, and WikiQA's own labels as the qrels (a user's
own data, as `rankuq evaluate --model M --task beir/<name>` reads it)."""

import csv
import gzip
import json
from pathlib import Path

import pytest

from rankuq import tasks


def write_beir_folder(folder: Path, questions: int = 4) -> Path:
    """``folder``/corpus.jsonl, queries.jsonl and qrels/test.tsv from ``questions`` WikiQA test
    questions with a correct sentence (and every sentence of their pages, correct or not)."""
    with gzip.open(tasks.data_root() / "wikiqa" / "WikiQA-test.tsv.gz", "rt", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    answered = [
        qid
        for qid in dict.fromkeys(row["QuestionID"] for row in rows)
        if any(r["QuestionID"] == qid and r["Label"].strip() == "1" for r in rows)
    ]
    kept = [row for row in rows if row["QuestionID"] in answered[:questions]]
    (folder / "qrels").mkdir(parents=True)
    corpus = {
        row["SentenceID"]: {"_id": row["SentenceID"], "title": row["DocumentTitle"], "text": row["Sentence"]}
        for row in kept
    }
    queries = {row["QuestionID"]: {"_id": row["QuestionID"], "text": row["Question"]} for row in kept}
    (folder / "corpus.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in corpus.values()))
    (folder / "queries.jsonl").write_text("".join(json.dumps(query) + "\n" for query in queries.values()))
    qrels = ["query-id\tcorpus-id\tscore"] + [
        f"{row['QuestionID']}\t{row['SentenceID']}\t{row['Label'].strip()}" for row in kept
    ]
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return folder


@pytest.fixture(scope="session")
def beir_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding the BEIR folder beir/my-data of eight real WikiQA test questions."""
    data = tmp_path_factory.mktemp("data")
    write_beir_folder(data / "beir" / "my-data", questions=8)
    return data
