"""MSDialog / MANtIS response-ranking TSV on fixture files in the released format."""

from pathlib import Path

import pytest

from rankuq import tasks
from rankuq.errors import RankuqError
from rankuq.tasks.lists import build_lists
from rankuq.tasks.response_tsv import Mantis, MSDialog, text_cid


def context_lines(turns: list[str], true: str, negatives: list[str]) -> list[str]:
    """One context's 10 lines as released: label, turns…, response."""
    return ["\t".join(["1", *turns, true])] + ["\t".join(["0", *turns, text]) for text in negatives]


FIRST = context_lines(
    ["my outlook crashes", "which version?", "2016"], "reinstall office", [f"neg {i}" for i in range(9)]
)
SECOND = context_lines(["excel formula help"], "use VLOOKUP", [f"other {i}" for i in range(9)])


def write(root: Path, folder: str, name: str, lines: list[str]) -> Path:
    path = root / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("task", [MSDialog, Mantis])
def test_lists_of_ten_per_context(tmp_path: Path, task: type[MSDialog] | type[Mantis]) -> None:
    write(tmp_path, task.folder, "valid.tsv", FIRST + SECOND)
    pool = task().pool("dev", tmp_path)
    assert pool.native and len(pool.qids) == 2 and len(pool.cids) == 20
    assert pool.contexts == [["my outlook crashes", "which version?", "2016"], ["excel formula help"]]
    assert [len(judged) for judged in pool.judged] == [10, 10]
    assert pool.cids[pool.judged[0][0][0]] == text_cid("reinstall office")
    table = build_lists(pool)
    assert table.num_rows == 20 and table.column("label").to_pylist().count(1) == 2
    assert set(table.column("ns").to_pylist()) == {"native"}


def test_registry_files() -> None:
    assert tasks.get("msdialog").files == ("msdialog/train.tsv", "msdialog/valid.tsv", "msdialog/test.tsv")
    assert tasks.get("mantis").native_splits == ("train", "dev", "test")


def test_repeated_response_counts_once_with_highest_label(tmp_path: Path) -> None:
    lines = [*FIRST, "0\tmy outlook crashes\twhich version?\t2016\treinstall office"]
    write(tmp_path, "msdialog", "test.tsv", lines)
    [judged] = MSDialog().pool("test", tmp_path).judged
    assert len(judged) == 10 and sorted(label for _, label in judged)[-1] == 1


def test_sampled_strategy_over_all_responses(tmp_path: Path) -> None:
    write(tmp_path, "msdialog", "train.tsv", FIRST + SECOND)
    table = build_lists(MSDialog().pool("train", tmp_path), "random", n=5)
    assert table.num_rows == 10 and table.column("label").to_pylist().count(1) == 2


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1\tonly a response", r"line 11: 2 tab-separated fields, expected at least 3"),
        ("yes\tturn\tresponse", r"line 11: label is 'yes', expected an integer"),
        ("300\tturn\tresponse", r"line 11: label is 300, expected 0 … 127"),
        ("1\t \t\tresponse", r"line 11: empty context \(every turn is blank\)"),
        ("1\tturn\t  ", r"line 11: empty response"),
    ],
)
def test_bad_lines(tmp_path: Path, line: str, message: str) -> None:
    write(tmp_path, "msdialog", "valid.tsv", [*FIRST, line])
    with pytest.raises(RankuqError, match=r"msdialog/valid\.tsv: " + message):
        MSDialog().pool("dev", tmp_path)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(RankuqError, match=r"mantis/test\.tsv.*RANKUQ_DATA"):
        Mantis().pool("test", tmp_path)
    write(tmp_path, "mantis", "test.tsv", [])
    with pytest.raises(RankuqError, match=r"mantis/test\.tsv: no queries for split test"):
        Mantis().pool("test", tmp_path)
