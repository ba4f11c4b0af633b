"""Downstream probes over a predictions table, registered by name (``bench.probes.PROBES``).

Each probe is one module exposing ``probe(predictions, *, dev=None, seed=0, …) -> ProbeResult``
and reads only the predictions table (contract 2), so it scores any method or an imported score
file. ``probe`` below prepares a table once and applies several probes to it.
"""

from collections.abc import Sequence

import pyarrow as pa

from rankuq.bench.probes import abstention, calibration, cutoff, moments, nota, risk  # noqa: F401  (they register)
from rankuq.bench.probes.base import PROBES, ProbeResult, ScoredLists, as_lists, merge, scored_lists

DEFAULT_PROBES = ("calibration", "risk", "abstention", "cutoff")  # nota needs NOTA queries kept

__all__ = ["DEFAULT_PROBES", "PROBES", "ProbeResult", "ScoredLists", "probe", "scored_lists"]


def probe(
    predictions: pa.Table | ScoredLists,
    names: Sequence[str] = DEFAULT_PROBES,
    *,
    dev: pa.Table | ScoredLists | None = None,
    seed: int = 0,
    confidences: Sequence[str] | None = None,
) -> ProbeResult:
    """The named probes on one predictions table, ranked once; ``dev`` (a predictions table of
    the same method on a development split) selects RA's b and fits the abstention learners;
    ``confidences`` are the abstention probe's (default: all that apply)."""
    lists = as_lists(predictions)
    reference = None if dev is None else as_lists(dev, "dev")
    options = {"abstention": {"confidences": confidences}} if confidences else {}
    return merge(
        [PROBES.get(name)(lists, dev=reference, seed=seed, **options.get(name, {})) for name in names]
    )
