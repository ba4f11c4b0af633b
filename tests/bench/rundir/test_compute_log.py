"""A run directory's compute log (bench.rundir.compute_log): each invocation's wall time, machine and
outcome added, summed, and said in the findings' scale table."""

import json
import os
import shutil
import time

import pytest

from rankuq.bench.rundir.compute_log import COMPUTE_FILE, read_log, start, summary, timed_invocation
from rankuq.errors import RankuqError


def test_each_invocation_adds_its_wall_time_machine_and_outcome(tmp_path):
    with timed_invocation(tmp_path, start(), facts={"members": 3, "members_cached": 1}):
        time.sleep(0.2)
    with (
        pytest.raises(KeyboardInterrupt),
        timed_invocation(tmp_path, start(), gpus=1, address="ray://head:10001"),
    ):
        raise KeyboardInterrupt
    with pytest.raises(RankuqError), timed_invocation(tmp_path, start()):
        raise RankuqError("bad row")
    log = read_log(tmp_path)
    assert log is not None
    first, stopped, failed = log["invocations"]
    assert [first["outcome"], stopped["outcome"], failed["outcome"]] == ["finished", "interrupted", "failed"]
    assert 0.2 <= first["wall_s"] < 5 and first["cores"] == os.cpu_count() and first["cpu"]
    assert first["ray"] == "local" and stopped["ray"] == "ray://head:10001" and stopped["gpus"] == 1
    assert (first["members"], first["members_cached"]) == (3, 1) and "members" not in stopped
    assert log["wall_s"] == pytest.approx(sum(item["wall_s"] for item in log["invocations"]), abs=0.11)


def test_a_failure_while_handling_ctrl_c_counts_as_interrupted(tmp_path):
    """A library cleaning up after Ctrl-C may fail in turn (MLflow's database, Ray's shutdown)."""
    with pytest.raises(RuntimeError), timed_invocation(tmp_path, start()):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("rollback failed") from None
    log = read_log(tmp_path)
    assert log is not None and log["invocations"][0]["outcome"] == "interrupted"


def test_a_run_directory_the_invocation_removed_gets_no_log(tmp_path):
    root = tmp_path / "run"
    root.mkdir()
    with pytest.raises(RankuqError), timed_invocation(root, start()):
        shutil.rmtree(root)  # as removed_on_error does on bad data
        raise RankuqError("bad data")
    assert not root.exists()


def test_a_broken_log_is_named_with_how_to_fix_it(tmp_path):
    (tmp_path / COMPUTE_FILE).write_text("{not json")
    with pytest.raises(RankuqError, match=f"{COMPUTE_FILE}: not JSON.*delete it"):
        read_log(tmp_path)
    (tmp_path / COMPUTE_FILE).write_text(json.dumps({"wall_s": 3}))
    with pytest.raises(RankuqError, match="no 'invocations' list"), timed_invocation(tmp_path, start()):
        pass
    assert read_log(tmp_path.parent / "nowhere") is None


def test_the_summary_sums_the_hours_and_names_the_machines_and_the_stopped_invocations():
    machine = {"cores": 2, "cpu": "AMD EPYC 7B13", "gpus": 0, "ray": "local"}
    log = {
        "invocations": [
            {**machine, "wall_s": 3600.0, "outcome": "interrupted"},
            {**machine, "wall_s": 1800.0, "outcome": "finished"},
        ]
    }
    assert (
        summary(log)
        == "wall 1.50 h on 2 cores (AMD EPYC 7B13) (2 invocations, 1 of them stopped before the end)"
    )
    copied = {**machine, "wall_s": 1800.0, "outcome": "finished", "members": 48, "members_cached": 47}
    said = (
        "wall 0.50 h on 2 cores (AMD EPYC 7B13) (1 invocation; 47 of its 48 members were trained before the "
        "log began)"
    )
    assert summary({"invocations": [copied]}) == said
    assert "before the log began" not in summary({"invocations": [{**copied, "members_cached": 0}]})
    card = {**machine, "cores": 16, "gpus": 1, "wall_s": 360.0, "outcome": "finished"}
    assert (
        summary({"invocations": [card]}) == "wall 0.10 h on 16 cores (AMD EPYC 7B13) and 1 GPU (1 invocation)"
    )
    assert summary({"invocations": []}) == "not recorded"
