"""The task interface and where the real data lives."""

import os
from abc import ABC, abstractmethod
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


class Task(ABC):
    """A dataset that yields candidate lists (contract 1) per split."""

    name: str
    description: str
    # Files the task reads, relative to the data root (listed by `rankuq tasks`).
    files: tuple[str, ...]

    @abstractmethod
    def load(self, split: str, root: Path) -> pa.Table:
        """Candidate lists of ``split`` read from ``root``, validated against contract 1."""

    def source_files(self, root: Path) -> list[Path]:
        return [root / name for name in self.files]


REGISTRY: Registry[Task] = Registry("task")
