"""The notebook API: ``rankuq.evaluate``, ``rankuq.leaderboard`` give what the commands print and
write (``rankuq.run_grid`` is ``bench.run.grid_run``'s grid run: tests/bench/run/test_grid_run.py,
test_runner.py; the lazy attributes of ``rankuq``: tests/rankuq/test_rankuq.py)."""

import pandas as pd
import pyarrow.parquet as pq
import pytest

import rankuq
from rankuq.bench.evaluation.blackbox import evaluate_file
from rankuq.bench.results.boards import read_run_dir, read_tracking
from rankuq.errors import RankuqError


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


def test_evaluate_takes_a_dataframe_with_a_dev_split_and_gives_the_file_s_values(wikiqa, tmp_path):
    """A DataFrame of predictions (the notebook's) scores as its Parquet file does, dev split and
    probes included; an unflagged frame of scores in [0, 1] counts as probabilities."""
    path, dev = tmp_path / "test.parquet", tmp_path / "dev.parquet"
    pq.write_table(wikiqa, path)
    pq.write_table(wikiqa.slice(0, 2000), dev)
    frame = wikiqa.to_pandas()
    expected = evaluate_file(predictions=path, dev=dev, probes=["calibration", "risk"])
    got = rankuq.evaluate(predictions=frame, dev=frame.head(2000), probes=["calibration", "risk"])
    assert "RA.b" in got.index and "ECE" in got.index
    pd.testing.assert_series_equal(got, pd.Series(expected, dtype=float))
    with pytest.raises(RankuqError, match="the predictions table: missing prediction columns"):
        rankuq.evaluate(predictions=frame.drop(columns="label"))


def test_evaluate_queries_gives_each_query_s_values_whose_mean_is_the_metric(wikiqa):
    """A row per query; each column's mean is evaluate's value (a predictions table is its own
    qrels, so every query counts), and a repeated (qid, cid) is refused as in the command."""
    frame = wikiqa.to_pandas()
    queries = rankuq.evaluate_queries(predictions=frame, metrics=["AP", "RR", "P@1"])
    assert queries.index.name == "qid" and len(queries) == frame["qid"].nunique()
    means = rankuq.evaluate(predictions=frame, metrics=["AP", "RR", "P@1"])
    pd.testing.assert_series_equal(queries.mean(), means, check_names=False, atol=1e-12)
    with pytest.raises(RankuqError, match="repeats"):
        rankuq.evaluate_queries(predictions=pd.concat([frame, frame.head(1)]))
