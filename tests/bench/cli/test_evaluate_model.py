"""`rankuq evaluate --model DIR --task T`: the list settings and `--plan`, the checkpoint's own maximum
length (said in one line), and a member of a finished grid scored again as given gives its
seed's row of the grid's results."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankuq.bench.cli.main import main
from rankuq.bench.config.grid import parse_grid
from rankuq.bench.planning.plan import plan
from rankuq.bench.results.leaderboard import metrics_of
from rankuq.bench.rundir.layout import RunLayout

from ..conftest import TINY_GRID


def test_plan_on_a_beir_folder_says_the_length_and_the_estimate(cross_encoder, beir_data, tmp_path, capsys):
    run_dir = tmp_path / "run"
    command = ["evaluate", "--model", str(cross_encoder), "--task", "beir/my-data"]
    assert main([*command, "--data-dir", str(beir_data), "--run-dir", str(run_dir), "--plan"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "max length: 512 tokens (tokenizer_config.json's model_max_length)"
    assert out[1].startswith("protocol: rerank: the top 100 of bm25 over the whole corpus as retrieved")
    name = f"zero-shot-{cross_encoder.name}-beir-my-data-bm25-100-retrieved"
    assert out[2].startswith(f"grid {name}: 2 cells (1 condition × 2 methods × 1 seed)")
    corpus = len((beir_data / "beir" / "my-data" / "corpus.jsonl").read_text().splitlines())
    # 8 queries × their top 100 of BM25, the whole corpus where it is smaller
    assert any(line.split() == ["bert", "test", f"{8 * min(100, corpus):,}"] for line in out)
    assert not run_dir.exists()  # a plan writes nothing


def test_the_list_settings_reach_the_grid(cross_encoder, tmp_path, capsys):
    command = ["evaluate", "--model", str(cross_encoder), "--task", "wikiqa", "--ns", "bm25", "--n", "5"]
    extra = ["--split", "dev", "--seeds", "0,1", "--max-length", "48", "--plan"]
    assert main([*command, *extra, "--run-dir", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "max length: 48 tokens (--max-length)"
    assert out[1].startswith("protocol: lists: 5 candidates a query")  # the papers' lists on a task
    assert (
        f"zero-shot-{cross_encoder.name}-wikiqa-bm25-5: 4 cells (1 condition × 2 methods × 2 seeds)" in out[2]
    )
    # the pairs scored: WikiQA dev's 126 questions with a correct answer × 5 BM25 candidates × 2 seeds
    assert any(line.split() == ["bert", "test", "1,260"] for line in out)


def test_a_long_folder_name_gets_a_short_grid_name(cross_encoder, tmp_path, capsys):
    import shutil

    folder = shutil.copytree(cross_encoder, tmp_path / ("my-cross-encoder-" + "x" * 100))
    assert main(["evaluate", "--model", str(folder), "--task", "wikiqa", "--plan"]) == 0
    name = capsys.readouterr().out.splitlines()[2].split()[1].rstrip(":")
    assert len(name) == 100 and name.startswith("zero-shot-my-cross-encoder-xxx")


@pytest.mark.parametrize("length", ["7", "513"])
def test_a_max_length_rankuq_cannot_use_is_one_line(cross_encoder, capsys, length):
    command = ["evaluate", "--model", str(cross_encoder), "--task", "wikiqa", "--max-length", length]
    assert main([*command, "--plan"]) == 2
    assert capsys.readouterr().err.strip() == f"rankuq: error: --max-length {length}: give 8 to 512 tokens"


def test_a_model_that_cannot_be_scored_as_given_fails_in_one_line(cross_encoder, tmp_path, capsys):
    """The MiniLM bi-encoder has no relevance head; a copy with its weights cut short cannot load; a
    3-label classifier has no relevance head either."""
    import shutil

    from rankuq.backbone import offline_minilm

    assert main(["evaluate", "--model", str(offline_minilm()), "--task", "wikiqa"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "saved as BertModel, without a sequence-classification head" in line
    cut = Path(shutil.copytree(offline_minilm(), tmp_path / "cut"))
    (cut / "model.safetensors").write_bytes((cut / "model.safetensors").read_bytes()[:1000])
    assert main(["evaluate", "--model", str(cut), "--task", "wikiqa"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{cut / 'model.safetensors'} is no whole safetensors file" in line
    nli = Path(shutil.copytree(cross_encoder, tmp_path / "nli"))
    config = json.loads((nli / "config.json").read_text())
    labels = {"id2label": {str(i): name for i, name in enumerate(["no", "maybe", "yes"])}}
    (nli / "config.json").write_text(json.dumps(config | labels))
    assert main(["evaluate", "--model", str(nli), "--task", "wikiqa"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "a 3-label classifier (BertForSequenceClassification)" in line


def test_the_models_options_alone_are_refused_with_a_run_file(tmp_path, capsys):
    command = ["evaluate", "--run", str(tmp_path / "run"), "--qrels", str(tmp_path / "qrels"), "--ns", "bm25"]
    assert main(command) == 2
    assert "--ns applies to a model scored on a task: give --model DIR --task NAME" in capsys.readouterr().err


def test_zero_shot_on_a_saved_member_is_its_leaderboard_row(finished, tmp_path, capsys):
    """The tiny grid's bert member of seed 0 (trained at max_length 32) records its length; scored as
    given it gives the grid's numbers for that seed (seeds.csv)."""
    run_dir, board = finished
    spec, params = parse_grid(TINY_GRID, "test grid")
    members = plan(spec, params, RunLayout(run_dir)).members.values()
    (key,) = {job.key for job in members if job.method == "bert" and job.seed == 0}
    capsys.readouterr()
    command = ["evaluate", "--model", str(run_dir / "models" / key), "--task", "wikiqa", "--json"]
    assert main([*command, "--run-dir", str(tmp_path / "zero-shot")]) == 0
    captured = capsys.readouterr()
    assert "max length: 32 tokens (tokenizer_config.json's model_max_length)" in captured.err.splitlines()
    zero_shot = pd.DataFrame(json.loads(captured.out))
    metrics = metrics_of(board)
    assert len(metrics) > 10 and "ECE" in metrics
    seeds = pd.read_csv(run_dir / "seeds.csv")
    (trained,) = seeds[(seeds["method"] == "bert") & (seeds["seed"] == 0)][metrics].to_numpy(float)
    given = zero_shot.set_index("method").loc["bert", metrics].to_numpy(float)
    np.testing.assert_allclose(given, trained, rtol=1e-6)


def on_my_data(cross_encoder, beir_data) -> list[str]:
    """`rankuq evaluate` of the test checkpoint on the BEIR folder beir/my-data of ``beir_data``."""
    return ["evaluate", "--model", str(cross_encoder), "--task", "beir/my-data", "--data-dir", str(beir_data)]


def test_plan_json_prints_one_json_object(cross_encoder, beir_data, tmp_path, capsys):
    """Issue 48: --json was ignored with --plan."""
    command = on_my_data(cross_encoder, beir_data)
    assert main([*command, "--run-dir", str(tmp_path / "run"), "--plan", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    (condition,) = found["grid"]["shifts"]
    assert (found["max_length"], found["protocol"], condition["test"], found["grid"]["train"]) == (
        512,
        "rerank",
        {"task": "beir/my-data", "ns": "bm25", "n": 100, "variant": "retrieved"},
        {"epochs": 0},
    )
    name = f"zero-shot-{cross_encoder.name}-beir-my-data-bm25-100-retrieved"
    assert found["plan"][0].startswith(f"grid {name}: 2 cells")


def test_n_below_2_is_one_line_not_the_default(cross_encoder, capsys):
    """Issue 48: --n 0 was taken as the default 10."""
    assert main(["evaluate", "--model", str(cross_encoder), "--task", "wikiqa", "--n", "0", "--plan"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("--n 0: a list needs 2 or more candidates, e.g. --n 10")


def test_a_beir_folder_judged_all_zero_is_refused_at_plan(cross_encoder, tmp_path, capsys):
    """Issue 48: --plan accepted it, and the run failed in Ray Data 73 s later."""
    folder = tmp_path / "data" / "beir" / "zero"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "a question"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t0\nq1\td2\t0\n")
    command = [
        "evaluate",
        "--model",
        str(cross_encoder),
        "--task",
        "beir/zero",
        "--data-dir",
        str(tmp_path / "data"),
    ]
    assert main([*command, "--run-dir", str(tmp_path / "run"), "--plan"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "test.tsv: every judgment is 0 (not relevant), so no query has a relevant document" in line


def test_evaluate_alone_names_its_three_forms(capsys):
    assert main(["evaluate"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "(--run RUN --qrels QRELS)" in line and "(--predictions FILE.parquet)" in line
    assert "a cross-encoder checkpoint on a task (--model DIR --task NAME)" in line


def test_rankuq_help_describes_evaluate_with_model(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "a cross-encoder checkpoint on a task (--model DIR --task NAME)" in help_text


def test_the_json_board_has_no_std_for_one_seed():
    """Issue 48: "std 0.0" for one seed, which has no spread."""
    from rankuq.bench.cli.evaluate import board_json

    table = pd.DataFrame(
        {
            "method": ["bert", "bm25"],
            "seeds": [1, 3],
            "R@1": [0.5, 0.4],
            "R@1 std": [0.0, 0.02],
            "R@1 p": [np.nan] * 2,
        }
    )
    rows = json.loads(board_json(table))
    assert rows[0]["R@1 std"] is None and rows[0]["R@1"] == 0.5
    assert rows[1]["R@1 std"] == 0.02


def test_a_beir_folders_default_numbers_are_ir_measures_on_its_full_qrels(cross_encoder, tmp_path, capsys):
    """Issue 48: a BEIR folder was scored on lists with its relevant documents put in and measured on
    the lists' labels. By default now BM25's top 100 is reranked as retrieved and measured against the
    folder's whole qrels: the board's numbers are ir-measures' on the predictions and qrels/test.tsv,
    for the reranker and for BM25, and a query whose relevant sentence BM25 misses counts."""
    import ir_measures
    import pyarrow.parquet as pq

    from .conftest import write_beir_folder

    folder = write_beir_folder(tmp_path / "data" / "beir" / "my-data", questions=12)
    run_dir = tmp_path / "run"
    command = ["evaluate", "--model", str(cross_encoder), "--task", "beir/my-data", "--n", "3"]
    assert main([*command, "--data-dir", str(tmp_path / "data"), "--run-dir", str(run_dir), "--json"]) == 0
    board = pd.DataFrame(json.loads(capsys.readouterr().out)).set_index("method")
    qrels = pd.read_csv(folder / "qrels" / "test.tsv", sep="\t", dtype=str).astype({"score": int})
    qrels.columns = ["query_id", "doc_id", "relevance"]
    measures = {"AP": ir_measures.AP, "nDCG@10": ir_measures.nDCG @ 10, "RR": ir_measures.RR}
    measures |= {"R@1": ir_measures.R @ 1, "P@1": ir_measures.P @ 1}
    missed = 0
    for method in ("bert", "bm25"):
        (file,) = (run_dir / "predictions").glob(f"*/{method}/seed-0-*.parquet")
        table = pq.read_table(file).to_pandas()
        run = pd.DataFrame({"query_id": table.qid, "doc_id": table.cid, "score": table.prob_mean})
        expected = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
        for name, measure in measures.items():
            assert board.loc[method, name] == pytest.approx(expected[measure], abs=1e-9), (method, name)
        missed = table.groupby("qid").label.max().eq(0).sum() + qrels.query_id.nunique() - table.qid.nunique()
    assert missed > 0  # 3 retrieved of each page's sentences: some question's correct one is not among them


def test_temperature_on_a_test_only_folder_says_what_to_add(cross_encoder, beir_data, tmp_path, capsys):
    """Issue 48: own-data.md's step 4 failed on step 1's folder with advice in grid terms ("use it as a
    shift's test side"); now the one line names the file to add, or the method to leave out."""
    command = on_my_data(cross_encoder, beir_data)
    extra = ["--methods", "bert,temperature,mc_dropout", "--run-dir", str(tmp_path / "run"), "--plan"]
    assert main([*command, *extra]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "add other queries' judgments in qrels/dev.tsv beside qrels/test.tsv" in line
    assert "leave temperature out" in line
    assert not re.search(r"\b(shift|side|grid|condition)", line)
    assert main([*command, "--methods", "bert,mc_dropout", "--run-dir", str(tmp_path / "run"), "--plan"]) == 0
