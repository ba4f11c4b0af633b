"""Name → object registries filled by a decorator (tasks, methods, strategies, metrics, probes), and
by installed plugins: a package declares an entry point in the registry's group (``rankuq.tasks``,
``rankuq.methods``, ``rankuq.probes``) naming its object or the module that registers it."""

import inspect
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from types import ModuleType
from typing import Generic, TypeVar

from rankuq.errors import RankuqError

T = TypeVar("T")


class Registry(Generic[T]):
    """A plain dict filled by ``@registry.register``; unknown names list the valid ones.

    The name is the object's own, stated once: its ``name`` attribute (a class's ``name = "bert"``,
    a metric family's), else, for a probe module's ``probe`` function, the last part of its module's name.
    With ``plugins``, the entry points of that group are loaded at the first lookup; one names a
    subclass of ``base`` (where given, else a function or class) or a module that registers.
    """

    def __init__(self, kind: str, plugins: str | None = None, base: type | None = None) -> None:
        self.kind, self.plugins, self.base = kind, plugins, base
        self._items: dict[str, T] = {}

    def register(self, item: T) -> T:
        name = name_of(item)
        if name in self._items:
            raise ValueError(f"{self.kind} '{name}' is registered twice")
        self._items[name] = item
        return item

    def get(self, name: str) -> T:
        items = self._loaded()
        if name not in items:
            plural = f"{self.kind[:-1]}ies" if self.kind.endswith("y") else f"{self.kind}s"  # strategies
            raise RankuqError(f"unknown {self.kind} '{name}'; valid {plural}: {', '.join(self.names())}")
        return items[name]

    def names(self) -> list[str]:
        return sorted(self._loaded())

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _loaded(self) -> dict[str, T]:
        """The items, after the plugins' entry points (once): an entry point names an object to
        register (a Method or Task class, a probe function) or a module whose import registers."""
        group, self.plugins = self.plugins, None
        for point in entry_points(group=group) if group else ():
            try:
                found = point.load()
            except Exception as error:  # a broken plugin is the user's to fix: say which
                raise RankuqError(
                    f"plugin {point.name} = {point.value} (entry point group {group}) failed to load: "
                    f"{error}; fix or uninstall that package"
                ) from None
            if isinstance(found, ModuleType):
                continue
            if not self._fits(found):  # an int, a string, an instance: no name to register it by
                raise RankuqError(
                    f"plugin {point.name} = {point.value} (entry point group {group}) names "
                    f"{type(found).__name__} {found!r:.40}, not {self._expected()} or a module that "
                    "registers one; fix or uninstall that package"
                )
            if name_of(found) not in self._items:
                self.register(found)
        return self._items

    def _fits(self, found: object) -> bool:
        if self.base is None:
            return isinstance(found, type) or inspect.isfunction(found)
        return isinstance(found, type) and issubclass(found, self.base)

    def _expected(self) -> str:
        return f"a {self.base.__name__} class" if self.base is not None else "a function or class"


def name_of(item: object) -> str:
    """The registered name of ``item`` (see ``Registry``)."""
    name = getattr(item, "name", None)
    if isinstance(name, str):
        return name
    return item.__module__.rpartition(".")[2]


def description_of(item: object) -> str:
    """The one-line description of ``item``: its ``description`` (tasks, methods, strategies, metric
    families), else, as for ``name_of``, the first paragraph of its module's docstring (a probe's)."""
    description = getattr(item, "description", None)
    if isinstance(description, str):
        return description
    return first_paragraph(sys.modules[item.__module__].__doc__)


def first_paragraph(docstring: str | None) -> str:
    """A docstring's first paragraph, its lines joined."""
    return " ".join((docstring or "").strip().split("\n\n")[0].split())
