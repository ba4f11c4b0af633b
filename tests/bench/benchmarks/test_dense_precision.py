"""The bfloat16-vs-fp32 neighbour benchmark's own arithmetic, with a stand-in encoder."""

from pathlib import Path

import numpy as np

from rankuq.bench.benchmarks.dense_precision import neighbours, overlap
from rankuq.tasks.pool import PoolBuilder


def test_overlap_counts_shared_rows_of_the_top() -> None:
    ours = np.array([[0, 1, 2, 3], [4, 5, 6, 7]])
    theirs = np.array([[1, 0, 9, 9], [9, 9, 9, 4]])
    assert overlap(ours, theirs, 2) == 0.5  # both of the first query's, none of the second's
    assert overlap(ours, theirs, 4) == (2 / 4 + 1 / 4) / 2
    assert overlap(ours, ours, 4) == 1.0


def test_neighbours_rank_by_inner_product() -> None:
    builder = PoolBuilder("tiny", "dev", Path("tiny.tsv"), native=False)
    for cid, text in [("d0", "x"), ("d1", "y"), ("d2", "xy")]:
        builder.candidate(cid, text)
    builder.query("q0", ["y"], {})
    axes = {"x": [1.0, 0.0], "y": [0.0, 1.0], "xy": [0.6, 0.8]}
    rows = neighbours(lambda texts: np.array([axes[t] for t in texts], dtype=np.float32), builder.build(), 3)
    assert rows.tolist() == [[1, 2, 0]]
