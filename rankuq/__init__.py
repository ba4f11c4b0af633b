"""rankuq: a benchmark harness for the calibration and uncertainty of neural rerankers.

The distribution claims one import name, with three rooms beneath it: ``rankuq.tasks`` (what to
rank), ``rankuq.methods`` (how to score), ``rankuq.bench`` (grids, the Ray engine, evaluation,
results, findings, the command), and the measurements in ``records/``. This folder's own modules
hold what all three share and import (errors, registries, the offline backbone loader, the
candidate-list contract and shard reading); they import none of them.
"""

from typing import TYPE_CHECKING

from rankuq import gpu_env
from rankuq.version import __version__ as __version__

# First of all: JAX and TensorFlow kept off the GPU before any module that may import them (bm25s
# starts JAX at import), in whichever process imports rankuq: the CLI, the API, a Ray worker.
gpu_env.apply()


# The notebook API, rankuq.run_grid(…) & co.: the top library layer's functions (rankuq.bench.api)
# re-exported by the package root, the one upward reference of the base layer. It is declared as an
# import under TYPE_CHECKING (mypy and editors see the functions' types; tests/test_layers.py sees the
# import, allows it for this file alone, and nothing else upward) and resolved on first use by
# __getattr__, so `import rankuq` in a Ray worker or the CLI stays free of Ray, torch and MLflow.
# Moving it out (users importing rankuq.bench.api) would break every notebook's `rankuq.run_grid`.
if TYPE_CHECKING:
    from rankuq.bench.api import compare as compare
    from rankuq.bench.api import evaluate as evaluate
    from rankuq.bench.api import evaluate_queries as evaluate_queries
    from rankuq.bench.api import leaderboard as leaderboard
    from rankuq.bench.api import run_grid as run_grid

API_MODULE = "rankuq.bench.api"
API = ("run_grid", "evaluate", "evaluate_queries", "leaderboard", "compare")


def __getattr__(name: str) -> object:
    """The notebook API, imported on first use (Ray, torch and MLflow take seconds to import)."""
    if name in API:
        from importlib import import_module

        return getattr(import_module(API_MODULE), name)
    raise AttributeError(f"module 'rankuq' has no attribute {name!r}")
