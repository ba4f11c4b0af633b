"""Contract 2, the predictions table: built from draws, flagged as probabilities or not, checked before
a probe reads it (one error naming the file, the row and the fix), and a damaged cached file dropped."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from rankuq.bench.predictions import (
    PREDICTION_SCHEMA,
    PROBABILISTIC_KEY,
    is_probabilistic,
    join_scores,
    predictions_table,
    read_cached_predictions,
    validate_predictions,
)
from rankuq.errors import RankuqError


def _predictions(path, qid: list[str], cid: list[str]):
    table = predictions_table(qid, cid, np.arange(len(qid)) % 2, np.linspace(0.1, 0.9, len(qid))[:, None])
    pq.write_table(table, path)
    return path


def test_a_table_holds_the_draws_and_their_mean_unless_the_method_gives_its_own():
    draws = np.array([[0.2, 0.4], [0.9, 0.7], [0.1, 0.3]])
    table = predictions_table(["q1", "q1", "q2"], ["a", "b", "c"], np.array([0, 1, 1]), draws)
    assert table.schema.remove_metadata() == PREDICTION_SCHEMA
    assert table["prob_mean"].to_pylist() == pytest.approx([0.3, 0.8, 0.2])
    np.testing.assert_allclose(np.stack(table["samples"].to_numpy(zero_copy_only=False)), draws, rtol=1e-7)
    assert table.schema.metadata[PROBABILISTIC_KEY] == b"true"
    own = predictions_table(
        ["q1", "q1", "q2"], ["a", "b", "c"], [0, 1, 1], draws, mean=np.array([0.5, 0.6, 0.7])
    )
    assert own["prob_mean"].to_pylist() == [0.5, 0.6, 0.7]  # a GP head's closed form, not the draws' mean
    with pytest.raises(ValueError, match=r"samples must be \[n=3, S\], got shape \(2, 2\)"):
        predictions_table(["q1", "q1", "q2"], ["a", "b", "c"], [0, 1, 1], draws[:2])
    with pytest.raises(ValueError, match=r"mean must be \[n=3\], got shape \(2,\)"):
        predictions_table(["q1", "q1", "q2"], ["a", "b", "c"], [0, 1, 1], draws, mean=np.zeros(2))


def test_scores_are_probabilities_when_flagged_so_or_unflagged_within_0_and_1():
    draws = np.array([[0.2], [0.9]])
    assert is_probabilistic(predictions_table(["q", "q"], ["a", "b"], [0, 1], draws))
    assert not is_probabilistic(predictions_table(["q", "q"], ["a", "b"], [0, 1], draws, probabilistic=False))
    unflagged = predictions_table(["q", "q"], ["a", "b"], [0, 1], draws).replace_schema_metadata(None)
    assert is_probabilistic(unflagged)
    bm25_like = predictions_table(["q", "q"], ["a", "b"], [0, 1], np.array([[7.5], [0.2]]))
    assert not is_probabilistic(bm25_like.replace_schema_metadata(None))


def test_batches_of_draws_and_means_are_joined_in_order():
    samples, means = join_scores(
        [(np.ones((2, 3)), np.array([0.1, 0.2])), (np.zeros((1, 3)), np.array([0.3]))]
    )
    assert (
        samples.shape == (3, 3) and samples[:, 0].tolist() == [1, 1, 0] and means.tolist() == [0.1, 0.2, 0.3]
    )
    samples, means = join_scores([np.ones((2, 3)), (np.zeros((1, 3)), np.array([0.3]))])
    assert samples.shape == (3, 3) and means is None  # one batch without means: none for the table


def _with_scores(table: pa.Table, rows: dict[int, float]) -> pa.Table:
    scores = table["prob_mean"].to_numpy().copy()
    for row, value in rows.items():
        scores[row] = value
    return table.set_column(table.schema.get_field_index("prob_mean"), "prob_mean", pa.array(scores))


def test_a_nan_or_infinite_score_is_refused_naming_the_file_and_the_first_row(wikiqa):
    assert validate_predictions(wikiqa, "p.parquet") is wikiqa  # the real table passes
    bad = _with_scores(wikiqa, {4321: np.nan, 17: np.inf})
    qid, cid = wikiqa["qid"][17].as_py(), wikiqa["cid"][17].as_py()
    with pytest.raises(RankuqError) as raised:
        validate_predictions(bad, "runs/x/seed-0.parquet")
    assert str(raised.value) == (
        f"runs/x/seed-0.parquet: row 17 (qid {qid}, cid {cid}): score is inf; 2 non-finite scores in all, "
        "fix the scorer or drop them"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t.drop_columns(["label"]),
            "p.parquet: missing prediction columns ['label']; expected at least ['qid', 'cid', 'label', "
            "'prob_mean']",
        ),
        (
            lambda t: t.set_column(2, "label", pc.cast(t["label"], pa.string())),
            "p.parquet: column label holds string, not integers; write it with the contract's types (int8)",
        ),
        (
            lambda t: t.set_column(4, "prob_mean", pc.cast(t["prob_mean"], pa.string())),
            "p.parquet: column prob_mean holds string, not numbers; write it with the contract's types "
            "(double)",
        ),
    ],
    ids=["no label", "label as text", "scores as text"],
)
def test_a_wrong_column_is_refused_naming_the_file_and_the_column(wikiqa, change, message):
    with pytest.raises(RankuqError) as raised:
        validate_predictions(change(wikiqa), "p.parquet")
    assert str(raised.value) == message


def test_a_candidate_on_two_rows_is_refused_naming_the_first_repeat(wikiqa):
    head = wikiqa.slice(0, 5)
    twice = pa.concat_tables([head, head.slice(3, 2)])
    with pytest.raises(RankuqError) as raised:
        validate_predictions(twice, "p.parquet")
    qid, cid = head["qid"][3].as_py(), head["cid"][3].as_py()
    assert str(raised.value) == (
        f"p.parquet: row 5 repeats (qid {qid}, cid {cid}); 2 repeated rows in all: keep one row per "
        "(qid, cid)"
    )


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: p.write_bytes(p.read_bytes()[:-20]), "Parquet magic bytes not found"),
        (lambda p: p.write_bytes(b"garbage"), "smaller than the minimum file footer"),
        (lambda p: pq.write_table(pa.table({"qid": ["a"]}), p), "columns ['qid']"),
        (lambda p: _predictions(p, ["a", "a"], ["x", "x"]), "repeats (qid a, cid x)"),
    ],
    ids=["cut short", "not Parquet", "other columns", "repeated rows"],
)
def test_a_damaged_cached_predictions_file_is_dropped_with_one_warning(tmp_path, caplog, damage, reason):
    path = _predictions(tmp_path / "seed-0.parquet", ["a", "a"], ["x", "y"])
    assert read_cached_predictions(path).equals(pq.read_table(path))
    damage(path)
    assert read_cached_predictions(path) is None and not path.exists()
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warning.startswith(f"{path}: cached predictions unusable (") and "\n" not in warning
    assert warning.endswith("; scoring again") and reason in warning
    assert read_cached_predictions(tmp_path / "absent.parquet") is None
