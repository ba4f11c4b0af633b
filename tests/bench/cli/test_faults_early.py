"""Bad input found before anything runs (issue 32): what used to fail only after the work (a file
store, an experiment name MLflow refuses), end in a traceback, or be accepted and then fail in every
trial. Each: exit code 2, one stderr line naming the input and the fix, nothing written."""

import os
import subprocess
import sys
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


RESULTS = Path(__file__).resolve().parents[3] / "paper_runs" / "gp_fit"  # committed: read only
PROSE = "Timings, roughly:\nbert was fast, mc_dropout slow, and so on\n"
COST = "layers,pairs,threads,precision,method,label,repeat,seconds,command\n6,256,1,fp32,bert,bert,0,{},m\n"


def _findings(tmp: Path, seeds: Callable[[str], str | bytes] = lambda s: s, *options: str) -> list[str]:
    """`rankuq findings` on a copy of a committed run whose seeds.csv is ``seeds`` of the real one."""
    run = tmp / "gp_fit"
    run.mkdir()
    for name in ("grid.yaml", "leaderboard.csv"):
        (run / name).write_bytes((RESULTS / name).read_bytes())
    changed = seeds((RESULTS / "seeds.csv").read_text())
    (run / "seeds.csv").write_bytes(changed if isinstance(changed, bytes) else changed.encode())
    return ["findings", str(run), "--out", str(tmp / "docs" / "findings.md"), *options]


def _seed_abc(text: str) -> str:
    header, first, *rest = text.splitlines(keepends=True)
    condition, method, _, tail = first.split(",", 3)
    return "".join([header, f"{condition},{method},abc,{tail}", *rest])


def _cost(tmp: Path, content: str | bytes) -> list[str]:
    cost = tmp / "cost.csv"
    cost.write_bytes(content if isinstance(content, bytes) else content.encode())
    return _findings(tmp, lambda s: s, "--cost", str(cost))


def _searched(tmp: Path, space: str) -> list[str]:
    """`rankuq run` of a grid searching ``space`` (one key: domain line)."""
    text = f"tasks: [wikiqa]\nmethods: {{bert: {{}}, sngp: {{}}}}\nsearch: {{space: {{{space}}}}}\n"
    return ["run", str(_grid(tmp, text)), "--run-dir", str(tmp / "run")]


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
    (
        "findings, binary seeds.csv",
        lambda t: _findings(t, lambda s: bytes(range(256))),
        "gp_fit/seeds.csv: cannot read as UTF-8 text",
    ),
    (
        "findings, seed 'abc'",
        lambda t: _findings(t, _seed_abc),
        "gp_fit/seeds.csv, line 2: seed is 'abc', expected a whole number; rerun `rankuq run",
    ),
    (
        "findings, --cost of prose",
        lambda t: _cost(t, PROSE),
        "cost.csv, line 2: 3 fields where the header has 2",
    ),
    (
        "findings, binary --cost",
        lambda t: _cost(t, b"\x89PNG\r\n\x1a\n\0\xff"),
        "cost.csv: cannot read as UTF-8",
    ),
    ("findings, empty --cost", lambda t: _cost(t, ""), "cost.csv: cut off"),
    (
        "findings, --cost seconds 'fast'",
        lambda t: _cost(t, COST.format("fast")),
        "cost.csv, line 2: seconds is 'fast', expected a positive number; write it with",
    ),
    (
        "search lr 1e-300 to 1e300",
        lambda t: _searched(t, "train.lr: {loguniform: [1.0e-300, 1.0e+300]}"),
        "search.space.train.lr: 1e+300 is not a valid value: Input should be less than or equal to 1",
    ),
    (
        "train.lr 2",
        lambda t: ["run", str(_grid(t, GRID + "train: {lr: 2.0}\n")), "--run-dir", str(t / "run")],
        "grid.yaml: train.lr: Input should be less than or equal to 1",
    ),
    (
        "search range to .inf",
        lambda t: _searched(t, "sngp.lengthscale: {uniform: [1.0, .inf]}"),
        "search.space.sngp.lengthscale: uniform takes finite numbers, got [1.0, inf]",
    ),
    ("findings, --cost seconds 0", lambda t: _cost(t, COST.format(0)), "seconds is 0, expected a positive"),
    *(
        (
            f"method setting {setting}",
            lambda t, setting=setting: [
                "run",
                str(_grid(t, GRID.replace("methods: {bm25: {}}", f"methods: {{{setting}}}"))),
                "--run-dir",
                str(t / "run"),
            ],
            message,
        )
        for setting, message in (
            ("sngp: {c: .inf}", "methods.sngp.c: Input should be a finite number"),
            ("sngp: {lengthscale: .nan}", "methods.sngp.lengthscale: Input should be a finite number"),
            ("gpf: {gamma: .inf}", "methods.gpf.gamma: Input should be a finite number"),
            ("mc_dropout: {T: 0}", "methods.mc_dropout.T: Input should be greater than 0"),
            ("pg_gp: {lengthscale: -1}", "methods.pg_gp.lengthscale: Input should be greater than 0"),
        )
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


def test_a_plugin_naming_an_int_is_one_line_of_the_real_command(tmp_path):
    """An installed package whose rankuq.tasks entry point names an int (it was an AttributeError
    traceback): `rankuq tasks` exits 2 with one line naming the entry point."""
    (tmp_path / "myplugin.py").write_text("RANKER = 5\n")
    info = tmp_path / "myplugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[rankuq.tasks]\nmine = myplugin:RANKER\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "rankuq.bench.cli", "tasks"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        "rankuq: error: plugin mine = myplugin:RANKER (entry point group rankuq.tasks) names int 5, "
        "not a Task class or a module that registers one; fix or uninstall that package"
    )


UNWRITABLE = [  # /proc takes no new file, although root passes every permission check on it
    ("leaderboard --out", lambda t: ["leaderboard", str(t / "run"), "--out", "/proc/rankuq-out"], "--out"),
    ("leaderboard --latex", lambda t: ["leaderboard", str(t / "run"), "--latex", "/proc/t.tex"], "--latex"),
    ("run --run-dir", lambda t: ["run", str(_grid(t)), "--run-dir", "/proc/rankuq-run"], "--run-dir"),
    ("findings --out", lambda t: ["findings", str(t / "run"), "--out", "/proc/findings.md"], "--out"),
]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize(("build", "option"), [c[1:] for c in UNWRITABLE], ids=[c[0] for c in UNWRITABLE])
def test_an_output_in_a_folder_that_takes_no_file_exits_2_before_anything_runs(
    tmp_path, capsys, build, option
):
    argv = build(tmp_path)
    before = _tree(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"rankuq: error: {option} /proc") and ": /proc is not writable (" in err
    assert _tree(tmp_path) == before and not any(Path("/proc").glob("rankuq*"))
