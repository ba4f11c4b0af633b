"""What to rank: datasets → candidate-list Parquet shards (contract 1). ``tasks.get("wikiqa")``.

``tasks.negatives`` holds the negative-sampling strategies, ``tasks.lists.build_lists`` cuts lists
of size n from a task's pool, ``tasks.shards.build_shards`` caches them as Parquet.
"""

from rankuq.tasks.base import REGISTRY, Task, data_root, family_names, get, one_domain

names = REGISTRY.names
register = REGISTRY.register

from rankuq.tasks import beir, clariq, irds, response_tsv, semeval, tables, trec, trecqa, udc, wikiqa  # noqa: E402,F401  (registers the tasks)

__all__ = ["REGISTRY", "Task", "data_root", "family_names", "get", "names", "one_domain", "register"]
