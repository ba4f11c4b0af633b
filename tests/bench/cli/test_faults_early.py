"""Bad input found before anything runs (issue 32): what used to fail only after the work (a file
store, an experiment name MLflow refuses), end in a traceback, or be accepted and then fail in every
trial. Each: exit code 2, one stderr line naming the input and the fix, nothing written."""

from collections.abc import Callable
from pathlib import Path

import pytest

from rankuq.bench.cli.main import main

GRID = "tasks: [wikiqa]\nmethods: {bm25: {}}\n"
LONG = "e" * 5000


def _grid(tmp: Path, text: str = GRID) -> Path:
    path = tmp / "grid.yaml"
    path.write_text(text)
    return path


def _run(tmp: Path, *options: str) -> list[str]:
    return ["run", str(_grid(tmp)), "--run-dir", str(tmp / "run"), *options]


def _board(tmp: Path, *options: str) -> list[str]:
    return ["leaderboard", "--out", str(tmp / "out"), *options]


def _store(tmp: Path) -> str:
    return f"sqlite:///{tmp / 'mlflow.db'}"  # absent: a store the command would make


# (name, argv builder taking tmp_path, what the line must name)
CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    (
        "run to a file store",
        lambda t: _run(t, "--tracking-uri", f"file://{t / 'mlruns'}"),
        "/mlruns: a folder (MLflow's file store), which MLflow no longer opens (its filesystem",
    ),
    (
        "leaderboard of a file store",
        lambda t: _board(t, "--tracking-uri", "mlruns"),
        "--tracking-uri mlruns: a folder (MLflow's file store)",
    ),
    (
        "run, 5,000-character --experiment",
        lambda t: _run(t, "--experiment", LONG),
        "--experiment eeeeeeeeeeeeeeeeeeee…: 5,000 characters, and MLflow takes at most 500",
    ),
    (
        "leaderboard, 5,000-character --experiment",
        lambda t: _board(t, "--tracking-uri", _store(t), "--experiment", LONG),
        "--experiment eeeeeeeeeeeeeeeeeeee…: 5,000 characters",
    ),
]


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder``: a file's bytes, None for a folder."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None for p in folder.rglob("*")}


@pytest.mark.parametrize(("build", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_exits_2_before_anything_runs(tmp_path, capsys, monkeypatch, build, named):
    monkeypatch.chdir(tmp_path)  # a relative store or reports/ would land here
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    argv = build(tmp_path)
    before = _tree(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith("rankuq: error: ") and named in err
    assert _tree(tmp_path) == before


def test_an_experiment_name_from_the_environment_is_named_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", LONG)
    assert main(_run(tmp_path)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rankuq: error: $MLFLOW_EXPERIMENT_NAME eeee") and "5,000 characters" in err
    assert not (tmp_path / "run").exists()
