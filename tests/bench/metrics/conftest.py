"""The worked lists of the metric family tests (tests import nothing from here).

Three queries, ranked by score: q1 ranks labels 0 1 0 1 (two relevant, at ranks 2 and 4); q2
ranks 2 0 1 (graded: 2 at rank 1, 1 at rank 3); q3 ranks 0 0 (nothing relevant). The rows are
given shuffled: the order of rows never matters."""

import numpy as np
import pytest

from rankuq.bench.metrics.matrix import RankedLists, ranked_lists
from rankuq.bench.predictions import predictions_table

ROWS = [  # qid, cid, label, score
    ("q2", "b", 0, 0.5),
    ("q1", "d", 1, 0.6),
    ("q3", "a", 0, 0.3),
    ("q1", "a", 0, 0.9),
    ("q2", "a", 2, 0.9),
    ("q1", "c", 0, 0.7),
    ("q3", "b", 0, 0.2),
    ("q2", "c", 1, 0.1),
    ("q1", "b", 1, 0.8),
]


@pytest.fixture(scope="session")
def worked() -> RankedLists:
    qid, cid, label, score = zip(*ROWS, strict=True)
    table = predictions_table(list(qid), list(cid), np.array(label), np.array(score)[:, None])
    return ranked_lists(table)
