"""The Task interface: files and splits from split_files, the default strategy."""

from pathlib import Path
from typing import ClassVar

import pytest

from rankuq import tasks
from rankuq.errors import RankuqError
from rankuq.tasks.base import Task
from rankuq.tasks.pool import Pool


class TwoSplits(Task):
    name = "two"
    description = "a test task"
    split_files: ClassVar[dict[str, tuple[str, ...]]] = {
        "train": ("two/train.tsv", "two/corpus.tsv"),
        "test": ("two/test.tsv", "two/corpus.tsv"),
    }
    native_splits = ("test",)

    def pool(self, split: str, root: Path) -> Pool:
        raise NotImplementedError


def test_splits_and_files_follow_split_files(tmp_path: Path) -> None:
    assert TwoSplits.splits == ("train", "test")
    assert TwoSplits.files == ("two/train.tsv", "two/corpus.tsv", "two/test.tsv")
    assert TwoSplits().source_files(tmp_path, "test") == [
        tmp_path / "two/test.tsv",
        tmp_path / "two/corpus.tsv",
    ]
    assert len(TwoSplits().source_files(tmp_path)) == 3


def test_default_strategy() -> None:
    assert TwoSplits().default_strategy("test") == "native"
    assert TwoSplits().default_strategy("train") == "bm25"
    with pytest.raises(RankuqError, match=r"unknown split 'dev' for task two; valid splits: train, test"):
        TwoSplits().default_strategy("dev")


def test_every_registered_task_lists_its_files() -> None:
    for name in tasks.names():
        task = tasks.get(name)
        assert task.name == name and task.description and task.files
        assert set(task.native_splits) <= set(task.splits)
