"""Name → object registries filled by a decorator (tasks, methods, strategies, metrics, probes)."""

from collections.abc import Iterator
from typing import Generic, TypeVar

from rankuq.errors import RankuqError

T = TypeVar("T")


class Registry(Generic[T]):
    """A plain dict filled by ``@registry.register``; unknown names list the valid ones.

    The name is the object's own, stated once: its ``name`` attribute (a class's ``name = "bert"``,
    a metric family's), else, for a probe's ``run`` function, the last part of its module's name.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, item: T) -> T:
        name = name_of(item)
        if name in self._items:
            raise ValueError(f"{self.kind} '{name}' is registered twice")
        self._items[name] = item
        return item

    def get(self, name: str) -> T:
        if name not in self._items:
            raise RankuqError(f"unknown {self.kind} '{name}'; valid {self.kind}s: {', '.join(self.names())}")
        return self._items[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def name_of(item: object) -> str:
    """The registered name of ``item`` (see ``Registry``)."""
    name = getattr(item, "name", None)
    if isinstance(name, str):
        return name
    return item.__module__.rpartition(".")[2]
