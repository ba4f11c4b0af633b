"""What to rank: datasets → candidate-list Parquet shards (contract 1). ``tasks.get("wikiqa")``."""

from tasks.base import REGISTRY, Task, data_root

get = REGISTRY.get
names = REGISTRY.names
register = REGISTRY.register

from tasks import wikiqa  # noqa: E402,F401  (registers the task)

__all__ = ["REGISTRY", "Task", "data_root", "get", "names", "register"]
