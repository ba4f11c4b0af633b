"""`rankuq run`: what was given is checked before anything is written (one stderr line, exit 2); --backbone
and --plan."""

import gzip

import pytest

from rankuq.bench.cli.main import main
from rankuq.tasks import data_root as tasks_data_root


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


def test_a_backbone_without_weights_fails_in_seconds_with_no_ray_started(tmp_path, cross_encoder):
    """As a user types it, in a fresh interpreter: checked before the grid's imports, one line naming
    the folder and what it lacks, exit 2, in under 10 s (was: Ray started, three Tune retries,
    55-142 s), with and without --plan; neither Ray nor torch even imported, no run folder."""
    import shutil
    import subprocess
    import sys

    folder = shutil.copytree(cross_encoder, tmp_path / "checkpoint")
    (folder / "model.safetensors").unlink()
    grid = tmp_path / "grid.yaml"
    grid.write_text(f"tasks: [wikiqa]\nmethods: {{bert: {{}}}}\nmodel: {{backbone: {folder}}}\n")
    for plan in (["--plan"], []):
        argv = ["run", str(grid), "--run-dir", str(tmp_path / "run"), *plan]
        code = (  # the command's own time: the interpreter's start-up is the machine's
            "import sys, time; started = time.monotonic(); from rankuq.bench.cli.main import main; "
            f"code = main({argv!r}); assert time.monotonic() - started < 10, time.monotonic() - started; "
            "assert not {'ray', 'torch'} & set(sys.modules), 'Ray or torch imported'; sys.exit(code)"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(
            f"rankuq: error: model.backbone {folder}: {folder} has a config.json but"
        )
        assert "no weights (model.safetensors" in done.stderr
    assert not (tmp_path / "run").exists()
