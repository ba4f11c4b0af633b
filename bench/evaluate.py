"""Black-box evaluation: a TREC run and qrels, or a predictions Parquet file → metric values.

Values equal ir-measures' defaults (``ir_measures.calc_aggregate`` with pytrec_eval) on the same
files: the mean is over every query of the qrels (one missing from the run scores 0 on every
metric, as ir-measures fills it in), run queries without judgments are ignored, unjudged
documents count as non-relevant, relevant documents the run missed still count in R@k, AP and
the nDCG ideal, and ties are broken as trec_eval does (``bench.metrics.matrix``).
"""

import codecs
import gzip
import logging
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rankuq.bench import metrics
from rankuq.bench.predictions import is_probabilistic, predictions_table, validate_predictions
from rankuq.errors import RankuqError

RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid 0 docno relevance"
DEV_PROBES = ("risk", "abstention")  # the probes that fit on a dev split (bench.probes)
# Bounds of what is read into memory: the largest run trec_eval users share (an MS MARCO top-1000 run
# of 7k queries) is about 0.4 GiB; a TREC line holds six short fields.
MAX_TREC_BYTES = 2 << 30
MAX_LINE_BYTES = 1 << 16
_CHUNK_BYTES = 1 << 22
_BLANK = np.zeros(256, dtype=bool)
_BLANK[list(b" \t\n\r\x0b\x0c")] = True  # the bytes that bytes.split() splits on


def read_trec_run(path: Path, strict: bool = False) -> pa.Table:
    """Read a TREC run (``qid Q0 docno rank score tag``, whitespace-separated, ``.gz`` allowed).

    Returns columns qid, cid (the docno), score: float64. The rank column is ignored, as
    trec_eval ignores it; blank lines and a leading UTF-8 BOM are skipped. Malformed lines and
    non-finite scores raise a RankuqError naming the file and line. A docno listed twice for one
    query keeps its last line, as ir-measures and ranx do, with one warning (``strict``: an error).
    """
    lines, fields = _read_fields(path, RUN_LAYOUT)
    scores = _numbers(path, lines, fields[4], "score", np.float64)
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise RankuqError(
            f"{path}, line {lines[bad[0]]}: score {fields[4][bad[0]].decode()} is not finite; "
            "give every document a finite score"
        )
    return _trec_table(path, lines, fields, "score", pa.array(scores), strict)


def read_trec_qrels(path: Path, strict: bool = False) -> pa.Table:
    """Read TREC qrels (``qid 0 docno relevance``, whitespace-separated, ``.gz`` allowed).

    Returns columns qid, cid (the docno), label: int8. Relevance must be an integer in 0..127
    (map negative grades to 0 first); malformed lines raise a RankuqError naming the file and
    line. A docno judged twice for one query is handled as in ``read_trec_run``.
    """
    lines, fields = _read_fields(path, QRELS_LAYOUT)
    labels = _numbers(path, lines, fields[3], "relevance", np.int64)
    bad = np.flatnonzero((labels < 0) | (labels > np.iinfo(np.int8).max))
    if bad.size:
        raise RankuqError(
            f"{path}, line {lines[bad[0]]}: relevance {labels[bad[0]]} is outside 0..127; "
            "map negative grades to 0 (non-relevant)"
        )
    return _trec_table(path, lines, fields, "label", pa.array(labels.astype(np.int8)), strict)


def run_to_predictions(run: pa.Table, qrels: pa.Table) -> pa.Table:
    """A contract-2 table of the run's documents for the queries the qrels judge.

    label is the qrels relevance, 0 for unjudged documents; samples = [score] (float32, the
    contract's type) while prob_mean keeps the exact float64 score so rankings match trec_eval;
    the table is probabilistic when every score is in [0, 1]. Queries only in the qrels cannot
    appear here (they have no candidates): pass the qrels to ``metrics.compute`` to count them.
    """
    judged = run.filter(pc.is_in(run["qid"], value_set=pc.unique(qrels["qid"])))
    if judged.num_rows == 0:
        raise RankuqError("the run and the qrels share no query id; check that they are for the same topics")
    scores = judged["score"].to_numpy()
    return predictions_table(
        judged["qid"].to_pylist(),
        judged["cid"].to_pylist(),
        _judgements(judged, qrels),
        scores[:, None],
        probabilistic=bool(np.all((scores >= 0) & (scores <= 1))),
        mean=scores,
    )


def _judgements(run: pa.Table, qrels: pa.Table) -> np.ndarray:
    """Each run row's qrels label, 0 when unjudged: (qid, cid) pairs of both tables coded
    together, which keeps the run's row order (a join would not) and is several times faster."""
    codes = [
        pc.dictionary_encode(pa.concat_arrays([run[name].combine_chunks(), qrels[name].combine_chunks()]))
        for name in ("qid", "cid")
    ]
    pairs = codes[0].indices.to_numpy().astype(np.int64) * len(codes[1].dictionary)
    _, pair = np.unique(pairs + codes[1].indices.to_numpy(), return_inverse=True)
    label_of = np.zeros(pair.max() + 1, dtype=np.int8)
    label_of[pair[run.num_rows :]] = qrels["label"].to_numpy()
    return label_of[pair[: run.num_rows]]


def evaluate_file(
    *,
    run: Path | None = None,
    qrels: Path | None = None,
    predictions: Path | None = None,
    names: Sequence[str] = metrics.DEFAULT_METRICS,
    probes: Sequence[str] = (),
    dev: Path | None = None,
    seed: int = 0,
    strict: bool = False,
) -> dict[str, float]:
    """Metric means for a run + qrels pair, or for a predictions Parquet file, plus ``probes``.

    ``ECE`` (Penha & Hauff, 2021's, balanced) and ``ECE.all`` (every candidate pooled) are added when the
    scores are probabilities. A predictions file is its own qrels:
    every query in it counts, including those with no relevant candidate (as in ir-measures).

    ``probes`` (``bench.probes``) score the same queries; ``dev`` is a predictions file of the
    same ranker on a development split: RA's b is chosen there and the abstention learners are
    fitted there (without it: no RA choice, and 80/20 splits of the file for the learners).
    Notes on what a probe left out go to the ``bench.evaluate`` logger (stderr). ``strict``
    refuses a TREC file that lists a (qid, docno) twice instead of keeping its last line. JSON keys
    (``<m>`` is a metric with '@' written '_at_', e.g. ``nDCG_at_10``):

    ==============  ============================================================================
    option          keys
    ==============  ============================================================================
    (always)        ``R@1 R@5 P@1 AP RR nDCG@10`` and ``ECE``, ``ECE.all`` for probabilities
    --calibration   ``ECE``, ``ECE.all``, ``ECE.adaptive``, ``ERCE``, ``ECE.nonrel_<k>`` (k = 1, 2, 5, 9)
    --risk          ``CVaR.optimistic.<m>``, ``CVaR.pessimistic.<m>`` (m: R_at_1 AP RR nDCG_at_10) and
                    ``<…>.p_value``; with --dev also ``RA.b``, ``RA.<m>``, ``RA.<m>.p_value``
    --abstention    ``nAUC.<m>.<u>``, ``AUC.<m>.<u>``, ``AUC.<m>.oracle``, ``AUC.<m>.random``
                    (m: AP nDCG_at_10 RR; u: u_max u_std u_1-2 u_lin u_log u_mah u_rf u_mlp,
                    and u_mean_var u_top_var for S > 1 draws), ``threshold.rate_MAE.<r>.<u>``,
                    ``threshold.AP_MAE.<r>.<u>`` (r: 10 50 90), ``break_even.AP``
    --nota          ``NOTA.F1.mean``, ``NOTA.F1.mean.std`` and, for S > 1 draws,
                    ``NOTA.F1.mean_var``, ``NOTA.F1.mean_var.std``, ``NOTA.p_value``
    --cutoff        ``cutoff.F1.oracle``, ``cutoff.F1_ratio.scores`` and, for S > 1 draws,
                    ``cutoff.F1_ratio.uncertainty``, ``cutoff.p_value``
    ==============  ============================================================================
    """
    if dev is not None and not set(probes) & set(DEV_PROBES):
        raise RankuqError(
            f"--dev {dev}: only the {' and '.join(DEV_PROBES)} probes read a dev file; "
            f"add --{' or --'.join(DEV_PROBES)}, or drop --dev"
        )
    if predictions is not None and run is None and qrels is None:
        table = validate_predictions(_read_parquet(predictions), str(predictions))
        judged, source = None, str(predictions)
    elif predictions is None and run is not None and qrels is not None:
        trec_run, judged = read_trec_run(run, strict), read_trec_qrels(qrels, strict)
        table, source = run_to_predictions(trec_run, judged), str(run)
    else:
        raise RankuqError(
            "evaluate either a TREC run with its qrels (--run RUN --qrels QRELS) or a "
            "predictions file (--predictions FILE.parquet), not both or neither"
        )
    if is_probabilistic(table):
        names = [*names, *(name for name in ("ECE", "ECE.all") if name not in names)]
    values = metrics.compute(table, names, qrels=judged, source=source)
    if probes:
        values |= _probe(table, source, probes, dev, seed)
    return values


def _probe(
    table: pa.Table, source: str, names: Sequence[str], dev: Path | None, seed: int
) -> dict[str, float]:
    from rankuq.bench import probes  # matplotlib and scikit-learn load only when a probe is asked for

    reference = None if dev is None else validate_predictions(_read_parquet(dev), str(dev))
    result = probes.run(probes.scored_lists(table, source), names, dev=reference, seed=seed)
    for note in result.notes:
        logging.getLogger(__name__).warning("%s", note)
    return result.metrics


def _read_fields(path: Path, layout: str) -> tuple[np.ndarray, list[list[bytes]]]:
    """Line numbers and columns of the non-blank lines, each with exactly the layout's fields.

    Fields are counted per line on the raw bytes and split in one call: no per-line Python loop.
    """
    width = len(layout.split())
    raw = _read_bytes(path)
    try:
        raw.decode()
    except UnicodeDecodeError as error:
        number = raw.count(b"\n", 0, error.start) + 1
        raise RankuqError(f"{path}, line {number}: not UTF-8 text; re-encode the file") from None
    data = np.frombuffer(raw, dtype=np.uint8)
    blank = _BLANK[data]
    starts = ~blank
    starts[1:] &= blank[:-1]
    newlines = np.flatnonzero(data == ord("\n"))
    per_line = np.bincount(np.searchsorted(newlines, np.flatnonzero(starts)), minlength=newlines.size + 1)
    bad = np.flatnonzero((per_line != 0) & (per_line != width))
    if bad.size:
        line = raw.split(b"\n")[bad[0]].decode().strip()
        raise RankuqError(
            f"{path}, line {bad[0] + 1}: expected {width} whitespace-separated fields "
            f"'{layout}', got {per_line[bad[0]]}: {line[:80]!r}"
        )
    lines = np.flatnonzero(per_line) + 1
    if lines.size == 0:
        raise RankuqError(f"{path}: no lines to read; expected lines of '{layout}'")
    tokens = raw.split()
    return lines, [tokens[i::width] for i in range(width)]


def _read_bytes(path: Path) -> bytes:
    """The file's bytes (``.gz`` decompressed, a leading UTF-8 BOM dropped), read in chunks so that
    a file past ``MAX_TREC_BYTES`` or a line past ``MAX_LINE_BYTES`` (``/dev/zero``, a binary file)
    stops with an error instead of filling the memory."""
    chunks: list[bytes] = []
    size = newlines = line_bytes = 0
    try:
        with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as f:
            while chunk := f.read(_CHUNK_BYTES):
                size += len(chunk)
                if size > MAX_TREC_BYTES:
                    raise RankuqError(
                        f"{path}: more than {MAX_TREC_BYTES >> 20} MiB of text, more than a TREC run or "
                        "qrels file holds; split it by query and evaluate the parts"
                    )
                last = chunk.rfind(b"\n")
                line_bytes = line_bytes + len(chunk) if last < 0 else len(chunk) - last - 1
                if line_bytes > MAX_LINE_BYTES:
                    raise RankuqError(
                        f"{path}, line {newlines + 1}: longer than {MAX_LINE_BYTES >> 10} KiB; "
                        "not a TREC file (lines of short whitespace-separated fields)"
                    )
                newlines += chunk.count(b"\n")
                chunks.append(chunk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise RankuqError(
            f"{path}: truncated or corrupt gzip file ({error}); download or compress it again"
        ) from None
    except OSError as error:
        raise RankuqError(f"{path}: cannot read ({error}); check the path") from None
    raw = b"".join(chunks)
    return raw[len(codecs.BOM_UTF8) :] if raw.startswith(codecs.BOM_UTF8) else raw


def _numbers(path: Path, lines: np.ndarray, values: list[bytes], name: str, dtype: type) -> np.ndarray:
    """A column parsed as numbers; the first value that does not parse is reported by line."""
    try:
        return np.array(values, dtype=dtype)
    except (ValueError, OverflowError):
        for number, value in zip(lines, values, strict=True):
            try:
                np.array([value], dtype=dtype)
            except (ValueError, OverflowError):
                kind = "an integer" if dtype is np.int64 else "a number"
                raise RankuqError(
                    f"{path}, line {number}: {name} {value.decode()!r} is not {kind}; fix or drop the line"
                ) from None
        raise


def _trec_table(
    path: Path, lines: np.ndarray, fields: list[list[bytes]], name: str, values: pa.Array, strict: bool
) -> pa.Table:
    """qid, cid (the docno) and one value column. A (qid, docno) on several lines keeps its last
    line, as ir-measures and ranx (pytrec_eval's dicts) do, with one warning naming the count and
    the first repeat; ``strict`` refuses it, as trec_eval does."""
    qid, cid = (pa.array(fields[i], pa.binary()).cast(pa.string()) for i in (0, 2))
    table = pa.table({"qid": qid, "cid": cid, name: values})
    if table.group_by(["qid", "cid"]).aggregate([]).num_rows == table.num_rows:
        return table
    pairs = table.select(["qid", "cid"]).to_pandas()
    repeats = pairs.duplicated(keep="first").to_numpy()
    row = int(np.argmax(repeats))
    first = int(np.flatnonzero((pairs.qid == pairs.qid[row]) & (pairs.cid == pairs.cid[row]))[0])
    place = (
        f"{path}, line {lines[row]}: docno {pairs.cid[row]} appears again for qid {pairs.qid[row]} "
        f"(first on line {lines[first]})"
    )
    if strict:
        raise RankuqError(f"{place}; keep one line per (qid, docno), or drop --strict to keep the last")
    logging.getLogger(__name__).warning(
        "%s; %d repeated (qid, docno) lines in all: the last line of each is kept, as ir-measures and "
        "ranx do (--strict refuses them)",
        place,
        int(repeats.sum()),
    )
    return table.filter(pa.array(~pairs.duplicated(keep="last").to_numpy()))


def _read_parquet(path: Path) -> pa.Table:
    try:
        return pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as error:
        raise RankuqError(
            f"{path}: cannot read as Parquet ({error}); pass a predictions table written by rankuq"
        ) from error
