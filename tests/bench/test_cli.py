import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import main


def test_tasks_and_methods_list_the_registries(capsys):
    assert main(["tasks"]) == 0
    assert "wikiqa" in capsys.readouterr().out
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
