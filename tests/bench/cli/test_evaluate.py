"""`rankuq evaluate`: a TREC run or predictions file scored, printed as one JSON object or a table."""

import json

from rankuq.bench.cli.main import main


def test_evaluate_prints_one_json_object_keyed_by_ir_measures_names(tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.4 t\nq2 Q0 d3 1 0.8 t\nq2 Q0 d4 2 0.7 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 0\nq2 0 d4 1\n")
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--json", "--probabilities"]) == 0
    values = json.loads(capsys.readouterr().out)
    assert list(values) == ["R@1", "R@5", "P@1", "AP", "RR", "nDCG@10", "ECE", "ECE.all"]
    assert values["R@1"] == 0.5 and values["RR"] == 0.75 and values["P@1"] == 0.5


def test_evaluate_without_qrels_is_a_usage_error(tmp_path, capsys):
    assert main(["evaluate", "--run", str(tmp_path / "run.txt")]) == 2
    assert "--run RUN --qrels QRELS" in capsys.readouterr().err
