"""docs/own-data.md does what it says: its `rankuq` commands, read from its fenced bash blocks, run as
written in a folder laid out as the page lays it out (a BEIR folder of real WikiQA questions, a
cross-encoder folder), and print what the page shows; the full run leaves the files the page names."""

import re
import shlex
import shutil
from pathlib import Path

import pytest

from rankuq.bench.cli.main import main

PAGE = Path(__file__).resolve().parents[3] / "docs" / "own-data.md"
HOME = "/home/you"  # the page's stand-in for the folder its commands run in


def blocks(language: str) -> list[str]:
    """The page's fenced blocks of ``language``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", PAGE.read_text(), flags=re.M | re.S)


def commands() -> list[list[str]]:
    """The page's `rankuq` commands, as argument lists after `rankuq`."""
    lines = [line for block in blocks("bash") for line in block.splitlines()]
    assert lines and all(line.startswith("rankuq ") for line in lines)
    return [shlex.split(line)[1:] for line in lines]


@pytest.fixture
def workplace(cross_encoder, beir_data, tmp_path, monkeypatch) -> Path:
    """The folder the page's commands run in: data/beir/my-data (the layout the page draws) and the
    model folder my-cross-encoder."""
    (layout,) = [block for block in blocks("text") if "corpus.jsonl" in block]
    drawn = [re.sub(r"^[\s│├└─]+", "", line) for line in layout.splitlines()]
    assert drawn == ["data/", "beir/", "my-data/", "corpus.jsonl", "queries.jsonl", "qrels/", "test.tsv"]
    shutil.copytree(beir_data, tmp_path / "data")
    shutil.copytree(cross_encoder, tmp_path / "my-cross-encoder")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_pages_plan_prints_what_the_page_shows(workplace, capsys):
    (plan,) = [command for command in commands() if "--plan" in command]
    assert main(plan) == 0
    printed = capsys.readouterr().out.replace(str(workplace), HOME).splitlines()
    (shown,) = [block for block in blocks("text") if block.startswith("max length:")]
    for line, expected in zip(printed, shown.splitlines(), strict=True):
        # the estimate's sources are cut short on the page ("(…)")
        assert line.startswith(expected.removesuffix("(…)")), (line, expected)


def test_the_pages_example_lines_are_what_a_beir_folder_holds(workplace):
    import json

    corpus, query = (json.loads(block) for block in blocks("json"))
    data = workplace / "data" / "beir" / "my-data"
    assert corpus in [json.loads(line) for line in (data / "corpus.jsonl").read_text().splitlines()]
    assert query in [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    (qrels,) = [block for block in blocks("text") if block.startswith("query-id")]
    assert set(qrels.splitlines()) <= set((data / "qrels" / "test.tsv").read_text().splitlines())


@pytest.mark.slow
def test_the_pages_commands_run_and_leave_what_it_names(ray_session, workplace, capsys):
    for command in commands():
        assert main(command) == 0
    out = capsys.readouterr().out
    assert "beir-my-data" in out and "written: leaderboard.md, .csv and report.html" in out
    assert "MLflow: `mlflow ui --backend-store-uri sqlite:///" in out  # issue 48: evaluate named no store
    named = re.findall(r"`(runs/zero-shot[^`/]*)/`", PAGE.read_text())
    (run_dir,) = {workplace / name for name in named}
    for name in ("leaderboard.md", "leaderboard.csv", "report.html", "mlflow.db"):
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "predictions").rglob("*.parquet"))
