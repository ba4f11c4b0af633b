"""The notebook API: ``rankuq.evaluate``, ``rankuq.leaderboard`` (``rankuq.run_grid`` is the runner's
function, run by tests/bench/run/test_runner.py) give what the commands print and write (the lazy
attributes of ``rankuq``: tests/rankuq/test_rankuq.py)."""

import pandas as pd
import pyarrow.parquet as pq
import pytest

import rankuq
from rankuq.bench.evaluation.blackbox import evaluate_file
from rankuq.bench.results.boards import read_run_dir, read_tracking


def test_evaluate_returns_the_command_s_values(wikiqa, tmp_path):
    path = tmp_path / "predictions.parquet"
    pq.write_table(wikiqa, path)
    values = rankuq.evaluate(predictions=path, probes=["calibration"])
    assert isinstance(values, pd.Series)
    assert values.to_dict() == evaluate_file(predictions=path, probes=["calibration"])
    assert {"R@1", "AP", "ECE", "ERCE"} <= set(values.index)


def test_leaderboard_reads_a_run_directory_or_a_store(finished_run, tracking_uri, tmp_path):
    pd.testing.assert_frame_equal(rankuq.leaderboard(finished_run), read_run_dir(finished_run).table)
    from_store = rankuq.leaderboard(tracking_uri=tracking_uri, grid="old-grid")
    pd.testing.assert_frame_equal(from_store, read_tracking(tracking_uri, "old-grid", tmp_path).table)
    with pytest.raises(ValueError, match="not both or neither"):
        rankuq.leaderboard()
