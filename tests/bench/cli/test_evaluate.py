"""`rankuq evaluate`: a TREC run or predictions file scored, printed as one JSON object or a table."""

import json

from rankuq import tasks
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


def test_evaluate_model_scores_a_checkpoint_as_given_and_ranks_as_it_does(
    ray_session, cross_encoder, tmp_path, capsys
):
    """`rankuq evaluate --model DIR --task wikiqa`: a grid with train.epochs 0 through Ray, its
    predictions the checkpoint's own σ(z) (ordered as CrossEncoder orders them), temperature on top."""
    import numpy as np
    import pandas as pd
    from sentence_transformers import CrossEncoder

    run_dir = tmp_path / "zero-shot"
    command = ["evaluate", "--model", str(cross_encoder), "--task", "wikiqa", "--methods", "bert,temperature"]
    assert main([*command, "--run-dir", str(run_dir), "--json"]) == 0
    board = pd.DataFrame(json.loads(capsys.readouterr().out))
    assert sorted(board["method"]) == ["bert", "bm25", "temperature"]  # BM25, the default baseline
    assert not (run_dir / "models").exists() or not any((run_dir / "models").iterdir())  # nothing trained
    (bert,) = (run_dir / "predictions" / "wikiqa" / "bert").glob("*.parquet")
    predictions = pd.read_parquet(bert).head(300)
    texts = pd.DataFrame(tasks.get("wikiqa")().load("test", tasks.data_root()).to_pandas())
    rows = predictions.merge(texts[["qid", "cid", "context", "text"]], on=["qid", "cid"])
    pairs = [(turns[0], text) for turns, text in zip(rows["context"], rows["text"], strict=True)]
    # at the length the checkpoint records, as CrossEncoder reads it by default
    own = CrossEncoder(str(cross_encoder), device="cpu").predict(pairs, batch_size=64)
    np.testing.assert_allclose(rows["prob_mean"], own, atol=1e-5)
    for _, group in rows.assign(own=own).groupby("qid"):  # each list ranked as the checkpoint ranks it
        assert list(group.sort_values("prob_mean", kind="stable").cid) == list(
            group.sort_values("own", kind="stable").cid
        )
