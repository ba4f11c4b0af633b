"""Writing TREC runs (``rankuq evaluate --write-run``); reading TREC runs and qrels is tasks.trec_format."""

from pathlib import Path

import pyarrow as pa

from rankuq.atomic import atomic_write
from rankuq.errors import RankuqError


def write_trec_run(table: pa.Table, path: Path, tag: str = "rankuq") -> None:
    """The table's candidates as a TREC run (``qid Q0 docno rank score tag``), each query ranked by
    prob_mean (exact float64 text, so trec_eval ranks as rankuq did)."""
    frame = table.select(["qid", "cid", "prob_mean"]).to_pandas()
    frame = frame.sort_values(["qid", "prob_mean", "cid"], ascending=[True, False, False], kind="stable")
    frame["rank"] = frame.groupby("qid").cumcount() + 1
    lines = (
        f"{q} Q0 {d} {r} {s!r} {tag}\n"
        for q, d, r, s in zip(frame.qid, frame.cid, frame["rank"], frame.prob_mean.astype(float), strict=True)
    )
    try:
        atomic_write(path, "".join(lines))
    except OSError as error:
        raise RankuqError(f"--write-run {path}: cannot write ({error}); check the folder") from None
