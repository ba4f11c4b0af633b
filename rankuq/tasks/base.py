"""The task interface and where the real data lives."""

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

import pyarrow as pa

from rankuq.errors import RankuqError
from rankuq.registry import Registry
from rankuq.tasks.lists import build_lists, default_strategy
from rankuq.tasks.pool import Pool

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
        repo = Path(__file__).resolve().parents[2]  # rankuq/tasks/base.py
        candidates = [Path.cwd().parent / "shared" / "data", repo.parent / "shared" / "data"]
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    raise RankuqError(
        f"data folder not found: {candidates[0]}; put the shared data there, "
        f"set ${DATA_ENV}, or pass --data-dir"
    )


def require_files(paths: Iterable[Path], root: Path | None = None) -> None:
    """Fail on the first missing data file, naming it and how to point rankuq elsewhere: the data
    folder ``root`` holds the file's top folder (beir/ for beir/my-data/corpus.jsonl)."""
    for path in paths:
        if not path.is_file():
            held = path.relative_to(root).parts[0] if root and path.is_relative_to(root) else path.parent.name
            raise RankuqError(
                f"data file not found: {path}; set ${DATA_ENV} or pass --data-dir "
                f"to the data folder that holds {held}/"
            )


class Task(ABC):
    """A dataset that yields a pool per split, from which candidate lists (contract 1) are cut.

    A subclass sets ``split_files`` (split → files it reads, relative to the data root); ``splits``
    and ``files`` (all of them, listed by `rankuq tasks`) follow from it.
    """

    name: str
    description: str
    split_files: ClassVar[dict[str, tuple[str, ...]]]
    splits: tuple[str, ...]
    files: tuple[str, ...]
    # Splits whose files hold whole candidate lists (the "native" negative-sampling strategy).
    native_splits: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "split_files" in cls.__dict__:
            cls.splits = tuple(cls.split_files)
            cls.files = tuple(dict.fromkeys(f for names in cls.split_files.values() for f in names))

    @abstractmethod
    def pool(self, split: str, root: Path) -> Pool:
        """Queries, judged candidates and corpus of ``split`` read from ``root``."""

    def load(self, split: str, root: Path) -> pa.Table:
        """Candidate lists of ``split`` as ``tasks.lists.build_lists`` cuts them by default."""
        return build_lists(self.pool(split, root))

    def default_strategy(self, split: str) -> str:
        """The strategy ``build_shards`` uses for ``split`` when none is named."""
        self.check_split(split)
        return default_strategy(split in self.native_splits)

    def source_files(self, root: Path, split: str | None = None) -> list[Path]:
        """Files ``pool(split)`` reads (all the task's files when ``split`` is None); caches hash them."""
        if split is None:
            return [root / name for name in self.files]
        self.check_split(split)
        return [root / name for name in self.split_files[split]]

    def available_splits(self, root: Path) -> tuple[str, ...]:
        """The splits whose files ``root`` can hold: all of ``splits`` (BEIR folders: the qrels there)."""
        return self.splits

    def check_split(self, split: str) -> None:
        """Reject a split name the task does not have, listing the valid ones."""
        if split not in self.splits:
            raise RankuqError(
                f"unknown split '{split}' for task {self.name}; valid splits: {', '.join(self.splits)}"
            )


# Holds the Task classes (as methods.REGISTRY holds Method classes): tasks.get(name)() loads.
REGISTRY: Registry[type[Task]] = Registry("task", plugins="rankuq.tasks", base=Task)


# Families of tasks named by a prefix and an argument (``beir/scifact``, ``parquet:lists.parquet``):
# prefix → (how the argument is shown, the class of the task the argument names).
FAMILIES: dict[str, tuple[str, Callable[[str], type[Task]]]] = {}


def register_family(prefix: str, argument: str, family: Callable[[str], type[Task]]) -> None:
    """Tasks ``<prefix><argument>`` are ``family(argument)``; ``argument`` shows it (``<name>``)."""
    FAMILIES[prefix] = (argument, family)


def family_names() -> list[str]:
    """How each family's tasks are named, e.g. ``beir/<name>``."""
    return [f"{prefix}{argument}" for prefix, (argument, _) in FAMILIES.items()]


def one_domain(first: str, second: str) -> bool:
    """Whether two tasks read some data file in common: one domain (trecqa and trecqa_clean are one);
    a shift between tasks that do not is cross-domain."""
    return bool(set(get(first).files) & set(get(second).files))


def get(name: str) -> type[Task]:
    """The task class ``name``: a registered task, or ``<prefix><argument>`` of a family."""
    for prefix, (_, family) in FAMILIES.items():
        if name.startswith(prefix):
            return family(name.removeprefix(prefix))
    try:
        return REGISTRY.get(name)
    except RankuqError as error:
        raise RankuqError(f"{error}; or {', '.join(family_names())}") from None
