"""`rankuq leaderboard`: a grid's tables from a run directory or MLflow, written as leaderboard.md,
report.html and LaTeX."""

import os
import subprocess
import sys

import pytest

from rankuq.bench.cli.common import EXIT_BROKEN_PIPE
from rankuq.bench.cli.main import main

RANKUQ = [sys.executable, "-m", "rankuq.bench.cli"]


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


def _files(folder):
    return {path: path.stat().st_mtime_ns for path in folder.rglob("*")}


def test_leaderboard_prints_per_condition_and_writes_only_where_asked(run_dir, tmp_path, capsys):
    before = _files(run_dir)
    assert main(["leaderboard", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "my-grid: wikiqa" in out and "my-grid: clariq-to-wikiqa" in out and "0.440†" in out
    assert "Benjamini–Hochberg" in out and "written" not in out
    assert _files(run_dir) == before  # reading a board writes nothing
    assert main(["leaderboard", str(run_dir), "--out", str(tmp_path / "out")]) == 0
    assert "## clariq-to-wikiqa" in (tmp_path / "out" / "leaderboard.md").read_text()
    report = (tmp_path / "out" / "report.html").read_text()
    assert report.count("<img") == 8 + 1  # the plots and the overview
    assert _files(run_dir) == before


def test_leaderboard_writes_latex_where_asked(run_dir, tmp_path, capsys):
    tex = tmp_path / "paper" / "tables.tex"
    assert main(["leaderboard", str(run_dir), "--latex", str(tex)]) == 0
    assert f"written: {tex}\n" in capsys.readouterr().out  # the LaTeX alone
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


def test_piped_the_tables_are_printed_whole_with_every_column(run_dir):
    done = subprocess.run([*RANKUQ, "leaderboard", str(run_dir)], capture_output=True, text=True, check=True)
    header = next(line for line in done.stdout.splitlines() if "method" in line)
    columns = ("method", "R@1", "ECE", "nAUC AP u_max")
    assert all(f" {column} " in header for column in columns), header
    assert "…" not in done.stdout  # rich's 80 columns would cut the cells


def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(run_dir):
    """`rankuq leaderboard RUN_DIR | head`, where head has gone before the first line."""
    with subprocess.Popen(
        [*RANKUQ, "leaderboard", str(run_dir)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        err = process.stderr.read()
    assert process.returncode == EXIT_BROKEN_PIPE and err == ""


def test_the_tables_fit_columns_keep_method_names_whole_and_wrap_the_footnote(run_dir):
    env = {**os.environ, "COLUMNS": "34"}  # piped: COLUMNS is the width
    done = subprocess.run([*RANKUQ, "leaderboard", str(run_dir)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) <= 34 and "…" not in done.stdout.replace("… ", "")  # no cut cell
    words = " ".join(done.stdout.split())  # the caption and the footnote wrap
    assert "more columns (" in words and "--columns or a wider terminal" in words
    assert "Benjamini–Hochberg" in words and "my-grid: clariq-to-wikiqa" in words


def test_columns_chooses_the_metrics_and_an_unknown_one_is_one_line(run_dir, capsys):
    assert main(["leaderboard", str(run_dir), "--columns", "R@1,ECE"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "method" in line)
    assert header.split() == ["method", "R@1", "ECE"]
    assert main(["leaderboard", str(run_dir), "--columns", "R@1,MAPS"]) == 2
    error = capsys.readouterr().err.strip()
    assert "--columns MAPS: not on this board; its columns: " in error and "\n" not in error


@pytest.mark.parametrize("columns", ["", ",,,"])
def test_columns_naming_no_metric_is_one_line_naming_the_columns(run_dir, capsys, columns):
    """Issue 48: they printed a board with no metric column."""
    assert main(["leaderboard", str(run_dir), "--columns", columns]) == 2
    out, error = capsys.readouterr()
    assert error.strip().endswith(
        "--columns: no metric named; give some of the board's columns: R@1, ECE, nAUC AP u_max"
    )
    assert "\n" not in error.strip() and not out
