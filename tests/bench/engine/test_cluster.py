"""The resource arithmetic of a run's Ray (bench.engine.cluster), on node tables as ray.nodes() gives them."""

import pytest

from rankuq.bench.engine import cluster
from rankuq.bench.engine.cluster import Cluster
from rankuq.bench.rundir.layout import RunLayout


def node(alive: bool = True, **resources: float) -> dict:
    return {"Alive": alive, "Resources": resources}


NODES = [
    node(CPU=1.0, GPU=1.0),  # one CPU: one scorer, whatever its GPU share
    node(CPU=8.0, GPU=2.0),  # four half GPUs
    node(CPU=4.0),  # a head without GPUs
    node(alive=False, CPU=8.0, GPU=8.0),  # a lost node
]


@pytest.mark.parametrize(("gpus", "cpus", "expected"), [(0.5, 1, 1 + 4), (1.0, 1, 1 + 2), (0.2, 4, 0 + 2)])
def test_gpu_scorers_at_once_count_what_each_live_node_holds(monkeypatch, tmp_path, gpus, cpus, expected):
    monkeypatch.setattr(cluster.ray, "nodes", lambda: NODES)
    assert Cluster(None, RunLayout(tmp_path)).scorers_at_once(gpus, cpus) == expected


def test_at_least_one_scorer_where_no_node_has_room(monkeypatch, tmp_path):
    monkeypatch.setattr(cluster.ray, "nodes", lambda: [node(CPU=4.0)])
    assert Cluster(None, RunLayout(tmp_path)).scorers_at_once(1.0, 1) == 1
