"""Name → object registries filled by a decorator (tasks, methods, metrics)."""

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from bench.errors import RankuqError

T = TypeVar("T")


class Registry(Generic[T]):
    """A plain dict filled by ``@registry.register(name)``; unknown names list the valid ones."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(item: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} '{name}' is registered twice")
            self._items[name] = item
            return item

        return add

    def get(self, name: str) -> T:
        if name not in self._items:
            raise RankuqError(
                f"unknown {self.kind} '{name}'; valid {self.kind}s: {', '.join(self.names())}"
            )
        return self._items[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
