"""``rankuq tasks`` and ``rankuq methods``: the registries listed."""

from collections.abc import Callable
from typing import Protocol, TypeVar

from rankuq.bench.cli.common import _print_table

T = TypeVar("T", covariant=True)


class _Listed(Protocol[T]):
    """A package that lists its registry: ``names()`` and ``get(name)`` (tasks, negatives, methods)."""

    @property
    def names(self) -> Callable[[], list[str]]: ...

    @property
    def get(self) -> Callable[[str], T]: ...


def _list_tasks() -> None:
    from rankuq import tasks
    from rankuq.tasks import lists, negatives

    rows = [[name, task.description, ", ".join(task.files)] for name, task in _entries(tasks)]
    _print_table("tasks", ["name", "description", "files (under the data folder)"], rows)
    print(f"your own data as a task: {', '.join(tasks.family_names())} (README, 'A grid file')")
    rows = [[name, strategy.description] for name, strategy in _entries(negatives)]
    _print_table("negative-sampling strategies", ["name", "description"], rows)
    print(f"list variants: {', '.join(lists.VARIANTS)}")


def _list_methods() -> None:
    from rankuq import methods

    rows = [
        [
            name,
            method.description,
            ", ".join(f"{k}={f.default}" for k, f in method.Params.model_fields.items()),
        ]
        for name, method in _entries(methods)
    ]
    _print_table("methods", ["name", "description", "parameters (defaults)"], rows)


def _entries(package: _Listed[T]) -> list[tuple[str, T]]:
    return [(name, package.get(name)) for name in package.names()]
