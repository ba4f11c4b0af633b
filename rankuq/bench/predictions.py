"""Contract 2: predictions, one row per (query, candidate) with S relevance-probability draws."""

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq.atomic import staged_file
from rankuq.errors import RankuqError

PREDICTION_SCHEMA = pa.schema(
    [
        ("qid", pa.string()),
        ("cid", pa.string()),
        ("label", pa.int8()),
        ("samples", pa.list_(pa.float32())),  # S draws; S = 1 for a deterministic ranker
        ("prob_mean", pa.float64()),
    ]
)
# Schema metadata key: "false" when scores are not probabilities (BM25, an imported TREC run).
PROBABILISTIC_KEY = b"rankuq.probabilistic"


def predictions_table(
    qid: Sequence[str] | np.ndarray,
    cid: Sequence[str] | np.ndarray,
    label: np.ndarray,
    samples: np.ndarray,
    probabilistic: bool = True,
    mean: np.ndarray | None = None,
) -> pa.Table:
    """Build a contract-2 table from a [n, S] sample matrix; prob_mean is ``mean`` where the
    method scores a predictive of its own (a GP head's closed form), else the sample mean."""
    samples = np.asarray(samples, dtype=np.float32)
    if samples.ndim != 2 or samples.shape[0] != len(qid):
        raise ValueError(f"samples must be [n={len(qid)}, S], got shape {samples.shape}")
    if mean is not None and np.shape(mean) != (len(qid),):
        raise ValueError(f"mean must be [n={len(qid)}], got shape {np.shape(mean)}")
    flat = pa.array(samples.reshape(-1))
    offsets = pa.array(np.arange(0, samples.size + 1, samples.shape[1], dtype=np.int32))
    table = pa.table(
        {
            "qid": pa.array(qid, pa.string()),
            "cid": pa.array(cid, pa.string()),
            "label": pa.array(np.asarray(label, dtype=np.int8)),
            "samples": pa.ListArray.from_arrays(offsets, flat),
            "prob_mean": pa.array(
                samples.mean(axis=1, dtype=np.float64) if mean is None else np.asarray(mean, np.float64)
            ),
        },
        schema=PREDICTION_SCHEMA,
    )
    return table.replace_schema_metadata({PROBABILISTIC_KEY: b"true" if probabilistic else b"false"})


def frame_predictions(
    frame: pd.DataFrame, samples: np.ndarray, probabilistic: bool = True, mean: np.ndarray | None = None
) -> pa.Table:
    """``predictions_table`` of a candidate frame's qid, cid and label columns and its [n, S] draws
    (and [n] predictive means, where the method has them)."""
    return predictions_table(
        frame["qid"].tolist(), frame["cid"].tolist(), frame["label"].to_numpy(), samples, probabilistic, mean
    )


def join_scores(
    outputs: Sequence[np.ndarray | tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray | None]:
    """A method scorer's outputs over consecutive batches (``methods.base.Scores``: [n, S] draws,
    or draws and [n] predictive means) → all the draws and all the means (None: no method means)."""
    pairs = [output if isinstance(output, tuple) else (output, None) for output in outputs]
    samples = np.concatenate([draws for draws, _ in pairs])
    if any(mean is None for _, mean in pairs):
        return samples, None
    return samples, np.concatenate([mean for _, mean in pairs])


def is_probabilistic(table: pa.Table) -> bool:
    """Scores are probabilities when flagged so, or (unflagged) when every prob_mean is in [0, 1]."""
    flag = (table.schema.metadata or {}).get(PROBABILISTIC_KEY)
    if flag is not None:
        return bool(flag == b"true")
    values = table.column("prob_mean").to_numpy()
    return bool(np.all((values >= 0) & (values <= 1)))


def validate_predictions(table: pa.Table, source: str) -> pa.Table:
    """Check the columns a probe needs and that no score is NaN or infinite."""
    required = ["qid", "cid", "label", "prob_mean"]
    missing = [name for name in required if name not in table.column_names]
    if missing:
        raise RankuqError(f"{source}: missing prediction columns {missing}; expected at least {required}")
    for name, check in (("label", pa.types.is_integer), ("prob_mean", _is_number)):
        kind = table.schema.field(name).type
        if not check(kind):
            raise RankuqError(
                f"{source}: column {name} holds {kind}, not {'integers' if name == 'label' else 'numbers'}; "
                f"write it with the contract's types ({PREDICTION_SCHEMA.field(name).type})"
            )
    _refuse_repeats(table, source)
    scores = table.column("prob_mean").to_numpy(zero_copy_only=False).astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        row = int(bad[0])
        raise RankuqError(
            f"{source}: row {row} (qid {table.column('qid')[row]}, cid {table.column('cid')[row]}): "
            f"score is {scores[row]}; {bad.size} non-finite scores in all, fix the scorer or drop them"
        )
    return table


def _is_number(kind: pa.DataType) -> bool:
    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind))


def _refuse_repeats(table: pa.Table, source: str) -> None:
    """A (qid, cid) on two rows would count a candidate twice: a scorer wrote it twice, so refuse
    (TREC runs of other tools keep their last line instead: ``bench.evaluation.blackbox``)."""
    if table.group_by(["qid", "cid"]).aggregate([]).num_rows == table.num_rows:
        return
    pairs = table.select(["qid", "cid"]).to_pandas()
    repeats = pairs.duplicated(keep="first").to_numpy()
    row = int(np.argmax(repeats))
    raise RankuqError(
        f"{source}: row {row} repeats (qid {pairs.qid[row]}, cid {pairs.cid[row]}); "
        f"{int(repeats.sum())} repeated rows in all: keep one row per (qid, cid)"
    )


def read_cached_predictions(path: Path) -> pa.Table | None:
    """A cached predictions file of the run directory, or None when there is none or when it is cut
    short, unreadable or not a contract-2 table: then it is deleted with one warning and the caller
    scores again (a cache entry is rebuilt, never a traceback)."""
    if not path.exists():
        return None
    try:
        table = pq.read_table(path)
        if table.schema.remove_metadata() != PREDICTION_SCHEMA:
            raise ValueError(f"columns {table.schema.names}, expected {PREDICTION_SCHEMA.names}")
        return validate_predictions(table, str(path))
    except (OSError, ValueError, pa.ArrowException, RankuqError) as error:
        logging.getLogger(__name__).warning(
            "%s: cached predictions unusable (%s); scoring again", path, error
        )
        path.unlink(missing_ok=True)
        return None


def write_cached_predictions(path: Path, table: pa.Table) -> None:
    """A split's predictions into the run directory's cache, whole or not at all (what
    ``read_cached_predictions`` reads back)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with staged_file(path) as staging:
        pq.write_table(table, staging)
