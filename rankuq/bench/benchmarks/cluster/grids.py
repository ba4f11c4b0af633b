"""The grids the cluster benchmark runs: the reference, the lost-node run and the scaling runs."""

from typing import Any

# The grid every node runs: 2 seeds × 5 ensemble members = 10 members, a fifth of a logical GPU each,
# so each worker node packs five; three epochs so that a killed node leaves members mid-training.
GRID: dict[str, Any] = {
    "name": "cluster",
    "tasks": ["wikiqa"],
    "methods": {"ensemble": {"M": 5}},
    "seeds": [0, 1],
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 400, "batch_size": 16, "epochs": 3},
    "eval": {"split": "test", "batch_size": 256, "precision": "fp32"},
    "resources": {"gpus_per_trial": 0.2, "cpus_per_trial": 0.2},
}

# The lost-node run: seed 0 of the same grid (the same members and predictions, by content key), half
# a GPU per member so that both worker nodes train two members at once and the fifth waits.
LOST_NODE_GRID: dict[str, Any] = {
    **GRID,
    "seeds": [0],
    "resources": {"gpus_per_trial": 0.5, "cpus_per_trial": 0.2},
}

# Scaling: one member per worker node at a time (a whole logical GPU and CPU each), more compute per
# member so that training, which the nodes share, dominates the serial driver work (about 25 s here:
# the driver's start, scoring a cell's two splits, probes, MLflow; 8 epochs gave 1.34-1.62, 16 more).
SCALING_EPOCHS = 16
SCALING_GRID: dict[str, Any] = {
    **GRID,
    "name": "cluster-scaling",
    "methods": {"ensemble": {"M": 6}},
    "seeds": [0],
    "train": {"max_queries": None, "batch_size": 16, "epochs": SCALING_EPOCHS},
    "resources": {"gpus_per_trial": 1, "cpus_per_trial": 1},
}
