import gzip
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import rankuq
from rankuq.bench.cli import main
from rankuq.tasks import data_root as tasks_data_root


def test_tasks_and_methods_list_the_registries(capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("wikiqa", "trecqa_clean", "semeval_graded", "beir/<name>", "run"))
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "mc_dropout" in out and "T=10" in out and "M=5" in out


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("tasks: [wikiqa]\nmethods: {sngpp: {}}\n", "unknown method 'sngpp'; valid methods: bert"),
        (
            "tasks: [wikiqa]\nmethods: {mc_dropout: {T: -1}}\n",
            "methods.mc_dropout.T: Input should be greater than 0",
        ),
        ("tasks: [wikiqa]\nmethods: {ensemble: {M: 0}}\n", "methods.ensemble.M"),
    ],
)
def test_a_bad_grid_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, grid, message):
    path = tmp_path / "grid.yaml"
    path.write_text(grid)
    run_dir = tmp_path / "run"
    assert main(["run", str(path), "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err and str(path) in err
    assert not run_dir.exists()


def test_a_missing_data_folder_exits_2_and_names_it(tmp_path, capsys):
    missing = tmp_path / "no-data"
    run_dir = tmp_path / "run"
    assert main(["run", "--data-dir", str(missing), "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert f"data folder not found: {missing}" in err and "RANKUQ_DATA" in err
    assert not run_dir.exists()


def test_the_installed_console_script_runs():
    script = Path(sys.executable).with_name("rankuq")
    done = subprocess.run([str(script), "tasks"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "wikiqa" in done.stdout


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


def test_a_malformed_tsv_row_names_file_and_line_and_leaves_no_shards(tmp_path, capsys):
    data = tmp_path / "data"
    (data / "wikiqa").mkdir(parents=True)
    source = tasks_data_root() / "wikiqa"
    for split in ("train", "dev", "test"):
        name = f"WikiQA-{split}.tsv.gz"
        with gzip.open(source / name, "rt", newline="") as file:
            lines = file.read().split("\n")
        if split == "train":
            lines[5] = lines[5].split("\t", 1)[1]  # line 6 loses a field
        with gzip.open(data / "wikiqa" / name, "wt", newline="") as out:
            out.write("\n".join(lines))
    run_dir = tmp_path / "run"
    assert main(["run", "--data-dir", str(data), "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert "WikiQA-train.tsv.gz" in err and "line 6" in err and err.count("\n") == 0
    assert not list(run_dir.glob("cache/*"))


@pytest.mark.parametrize(
    "args",
    [[], ["RUN", "--tracking-uri", "sqlite:///x.db"], ["RUN", "--grid", "g"]],
    ids=["neither", "both", "grid-without-uri"],
)
def test_leaderboard_needs_a_run_dir_or_a_tracking_uri(capsys, args):
    assert main(["leaderboard", *args]) == 2
    assert "give either RUN_DIR or --tracking-uri URI [--grid NAME]" in capsys.readouterr().err


def test_leaderboard_of_a_run_dir_without_a_board_says_to_run_first(tmp_path, capsys):
    assert main(["leaderboard", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'leaderboard.csv'} not found" in err and "rankuq run" in err
    assert list(tmp_path.iterdir()) == []


def test_leaderboard_prints_per_condition_and_writes_into_the_run_dir(run_dir, capsys):
    assert main(["leaderboard", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "my-grid: wikiqa" in out and "my-grid: clariq-to-wikiqa" in out and "0.440†" in out
    assert "Benjamini–Hochberg" in out
    assert "## clariq-to-wikiqa" in (run_dir / "leaderboard.md").read_text()
    assert (run_dir / "report.html").read_text().count("<img") == 8 + 1  # the plots and the overview


def test_leaderboard_writes_latex_where_asked(run_dir, tmp_path, capsys):
    tex = tmp_path / "paper" / "tables.tex"
    assert main(["leaderboard", str(run_dir), "--latex", str(tex)]) == 0
    assert str(tex) in capsys.readouterr().out
    assert tex.read_text().count(r"\begin{table}") == 2


def test_leaderboard_latex_into_a_folder_is_refused(run_dir, tmp_path, capsys):
    assert main(["leaderboard", str(run_dir), "--latex", str(tmp_path)]) == 2
    assert "is a folder; give a file path" in capsys.readouterr().err


def test_leaderboard_from_mlflow_writes_the_named_grid(tracking_uri, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["leaderboard", "--tracking-uri", tracking_uri, "--grid", "old-grid", "--out", str(out)]) == 0
    assert "old-grid: wikiqa" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.md", "report.html"]
    assert (out / "report.html").read_text().count("<img") == 4 + 1


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"rankuq {rankuq.__version__}"
    assert rankuq.__version__ == importlib.metadata.version("rankuq")


def test_run_backbone_must_be_a_folder(tmp_path, capsys):
    run_dir = tmp_path / "run"
    missing = tmp_path / "no-member"
    assert main(["run", "--backbone", str(missing), "--run-dir", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"--backbone {missing}: no such folder" in err
    assert not run_dir.exists()


def test_run_backbone_overrides_the_grid_s_model_backbone(tmp_path, capsys, monkeypatch):
    """A member saved by an earlier run is the backbone the plan trains from (absolute path)."""
    from rankuq import methods
    from rankuq.backbone import TINY, ModelConfig, build_cross_encoder

    config = ModelConfig(backbone=TINY, max_length=32)
    member = tmp_path / "models" / "k"
    methods.create("bert").save_member(build_cross_encoder(config, seed=0), config, member)
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "tasks: [wikiqa]\nmethods: {bert: {}}\nseeds: [0]\nmodel: {backbone: tiny, max_length: 32}\n"
    )
    monkeypatch.chdir(tmp_path)
    command = ["run", str(grid), "--plan", "--run-dir", str(tmp_path / "run")]
    assert main([*command, "--backbone", "models/k"]) == 0
    assert f"members to train: 1 (0 cached), backbone {member}\n" in capsys.readouterr().out
    assert main(command) == 0
    assert "members to train: 1 (0 cached), backbone tiny\n" in capsys.readouterr().out
