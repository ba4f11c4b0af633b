"""The task interface and where the real data lives."""

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from bench.errors import RankuqError
from bench.registry import Registry

DATA_ENV = "RANKUQ_DATA"
SPLITS = ("train", "dev", "test")


def data_root(override: str | Path | None = None) -> Path:
    """The shared data folder: ``override``, else $RANKUQ_DATA, else ../shared/data beside the repo.

    The default is looked up beside the current directory first, then beside the source tree.
    """
    if override is not None:
        candidates = [Path(override)]
    elif os.environ.get(DATA_ENV):
        candidates = [Path(os.environ[DATA_ENV])]
    else:
        repo = Path(__file__).resolve().parents[1]
        candidates = [Path.cwd().parent / "shared" / "data", repo.parent / "shared" / "data"]
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    raise RankuqError(
        f"data folder not found: {candidates[0]}; put the shared data there, "
        f"set ${DATA_ENV}, or pass --data-dir"
    )


def require_files(paths: Iterable[Path]) -> None:
    """Fail on the first missing data file, naming it and how to point rankuq elsewhere."""
    for path in paths:
        if not path.is_file():
            raise RankuqError(
                f"data file not found: {path}; set ${DATA_ENV} or pass --data-dir "
                f"to the folder that holds {path.parent.name}/"
            )


class Task(ABC):
    """A dataset that yields candidate lists (contract 1) per split."""

    name: str
    description: str
    # Files the task reads, relative to the data root (listed by `rankuq tasks`).
    files: tuple[str, ...]
    splits: tuple[str, ...] = SPLITS

    @abstractmethod
    def load(self, split: str, root: Path) -> pa.Table:
        """Candidate lists of ``split`` read from ``root``, validated against contract 1."""

    def source_files(self, root: Path, split: str | None = None) -> list[Path]:
        """Files that ``load(split)`` reads (all the task's files when ``split`` is None).

        Caches hash these, so a task whose splits live in separate files should narrow the list.
        """
        if split is not None:
            self.check_split(split)
        return [root / name for name in self.files]

    def check_split(self, split: str) -> None:
        """Reject a split name the task does not have, listing the valid ones."""
        if split not in self.splits:
            raise RankuqError(
                f"unknown split '{split}' for task {self.name}; "
                f"valid splits: {', '.join(self.splits)}"
            )


# Holds the Task classes (as methods.REGISTRY holds Method classes): tasks.get(name)() loads.
REGISTRY: Registry[type[Task]] = Registry("task")
