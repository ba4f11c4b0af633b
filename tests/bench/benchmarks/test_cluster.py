"""Distributed for real (issue 12): a head and two worker nodes on this machine (real raylets, each
worker declaring one logical GPU), a real `mlflow server` on 127.0.0.1, `rankuq run --address` on a
tiny WikiQA grid, a worker node SIGKILLed mid-training and the driver SIGKILLed mid-scoring.

Several minutes on 2 cores; excluded from the README's test command. Run it alone, serialised with
other Ray tests on the machine:

    flock /tmp/rankuq-ray.lock .venv/bin/python -m pytest -m cluster tests/bench/benchmarks/test_cluster.py
"""

import pytest

from rankuq.bench.benchmarks.cluster.measure import measure
from rankuq.tasks.base import data_root

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("cluster")
    return measure(root, str(data_root()), scaling=False)


def test_three_nodes_and_every_process_stopped(measured):
    assert measured["nodes"] == 3
    assert measured["stray_processes"] == 0


def test_gpu_shares_pack_five_members_per_logical_gpu_over_both_workers(measured):
    assert measured["members"] == 10
    assert measured["worker_nodes_used"] == 2
    assert measured["max_members_on_one_gpu"] == 5
    assert measured["gpu_ids_seen"] == ["0"]
    assert measured["member_devices"] == ["cpu"]  # torch sees no CUDA: the GPU share runs on the CPU
    assert measured["processes_warned_gpu_unseen"] >= 10  # each Train worker and scorer said so


def test_a_lost_node_and_a_killed_driver_change_nothing(measured):
    assert measured["node_killed"] and measured["train_workers_on_killed_node"] >= 1
    assert measured["driver_killed_mid_scoring"]
    assert measured["member_weights_identical"]  # every member, the ones killed with the node included
    # Scored again on the survivors, the draws agree to float32 rounding (measured: ≤ 3e-8, not
    # bit-identical: predictions_identical was false in the run of 2026-11-23).
    assert measured["predictions_max_abs_difference"] <= 1e-6
    assert measured["duplicate_mlflow_runs"] == 0
    assert measured["mlflow_runs"] == {"grid": 1, "cell": 1, "seed": 1}  # the lost-node grid: seed 0
    assert measured["runs_added_by_rerun"] == 0


def test_the_leaderboard_reads_back_over_http(measured):
    assert measured["leaderboard_over_http_equal"]
