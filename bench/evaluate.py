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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rankuq.bench import metrics
from rankuq.bench.files import atomic_write
from rankuq.bench.predictions import (
    PROBABILISTIC_KEY,
    is_probabilistic,
    predictions_table,
    validate_predictions,
)
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


def run_to_predictions(
    run: pa.Table, qrels: pa.Table, probabilities: bool = False, source: str = "run"
) -> pa.Table:
    """A contract-2 table of the run's documents for the queries the qrels judge.

    label is the qrels relevance, 0 for unjudged documents; samples = [score] (float32, the
    contract's type) while prob_mean keeps the exact float64 score so rankings match trec_eval.
    The table is probabilistic only when ``probabilities`` says the scores are P(relevant), which
    every score in [0, 1] must then be. Queries only in the qrels cannot appear here (they have no
    candidates): pass the qrels to ``metrics.compute`` to count them.
    """
    judged = run.filter(pc.is_in(run["qid"], value_set=pc.unique(qrels["qid"])))
    if judged.num_rows == 0:
        raise RankuqError("the run and the qrels share no query id; check that they are for the same topics")
    scores = judged["score"].to_numpy()
    table = predictions_table(
        judged["qid"].to_pylist(),
        judged["cid"].to_pylist(),
        _judgements(judged, qrels),
        scores[:, None],
        probabilistic=probabilities,
        mean=scores,
    )
    if probabilities:
        check_probabilities(table, source)
    return table


def check_probabilities(table: pa.Table, source: str) -> None:
    """Refuse --probabilities for scores outside [0, 1], naming the first such candidate."""
    scores = table["prob_mean"].to_numpy()
    outside = np.flatnonzero((scores < 0) | (scores > 1))
    if outside.size:
        row = int(outside[0])
        raise RankuqError(
            f"{source}: --probabilities, but qid {table['qid'][row]} docno {table['cid'][row]} scores "
            f"{float(scores[row])!r}, outside [0, 1] ({outside.size} such scores); drop --probabilities for "
            "ranking scores that are not P(relevant)"
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


@dataclass(frozen=True)
class Evaluated:
    """What ``rankuq evaluate`` scores: a contract-2 table, the qrels behind it (None for a
    predictions file, its own qrels) and the file it came from (for messages)."""

    table: pa.Table
    qrels: pa.Table | None
    source: str


def read_inputs(
    *,
    run: Path | None = None,
    qrels: Path | None = None,
    predictions: Path | None = None,
    strict: bool = False,
    probabilities: bool | None = None,
    flags: tuple[str, str, str] = ("--run", "--qrels", "--predictions"),
) -> Evaluated:
    """A TREC run with its qrels, or a predictions Parquet file, as a contract-2 table.

    ``probabilities`` says whether the scores are P(relevant): a TREC run's are not unless it
    is True; a predictions file's follow its own flag unless it is given. ``flags`` name the
    options in messages (the dev split has its own)."""
    if predictions is not None and run is None and qrels is None:
        table = validate_predictions(_read_parquet(predictions), str(predictions))
        if probabilities is not None:
            flag = b"true" if probabilities else b"false"
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), PROBABILISTIC_KEY: flag})
            if probabilities:
                check_probabilities(table, str(predictions))
        return Evaluated(table, None, str(predictions))
    if predictions is None and run is not None and qrels is not None:
        trec_run, judged = read_trec_run(run, strict), read_trec_qrels(qrels, strict)
        return Evaluated(
            run_to_predictions(trec_run, judged, bool(probabilities), str(run)), judged, str(run)
        )
    run_flag, qrels_flag, predictions_flag = flags
    raise RankuqError(
        f"evaluate either a TREC run with its qrels ({run_flag} RUN {qrels_flag} QRELS) or a "
        f"predictions file ({predictions_flag} FILE.parquet), not both or neither"
    )


def metric_names(evaluated: Evaluated, names: Sequence[str] | None) -> list[str]:
    """``names`` checked (ir-measures spelling), or the defaults: ``DEFAULT_METRICS`` and, for
    probabilities, ``ECE`` and ``ECE.all``."""
    if names is not None:
        for name in names:
            metrics.get(name)  # unknown names: one line listing the valid families
        return list(dict.fromkeys(names))
    extra = ("ECE", "ECE.all") if is_probabilistic(evaluated.table) else ()
    return [*metrics.DEFAULT_METRICS, *extra]


def evaluate_inputs(
    evaluated: Evaluated,
    names: Sequence[str] | None = None,
    probes: Sequence[str] = (),
    dev: Evaluated | None = None,
    seed: int = 0,
    confidences: Sequence[str] | None = None,
) -> dict[str, float]:
    """Metric means (keys spelled as the metrics are, ``nDCG@10``) and the ``probes``' metrics."""
    if confidences and "abstention" not in probes:
        raise RankuqError(
            "--confidences choose the abstention probe's confidence functions; add --abstention"
        )
    table, source = evaluated.table, evaluated.source
    values = metrics.compute(table, metric_names(evaluated, names), qrels=evaluated.qrels, source=source)
    if probes:
        from rankuq.bench import probes as probing  # matplotlib and scikit-learn load only when asked for

        result = probing.run(
            probing.scored_lists(table, source),
            probes,
            dev=None if dev is None else dev.table,
            seed=seed,
            confidences=confidences,
        )
        for note in result.notes:
            logging.getLogger(__name__).warning("%s", note)
        values |= result.metrics
    return values


def per_query_values(evaluated: Evaluated, names: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    """Each query's value of every per-query metric (``ir_measures.iter_calc``'s), by qid; queries
    of the qrels that the run missed score 0, as in the means. Pooled metrics (ECE) have none."""
    ranking = [name for name in metric_names(evaluated, names) if not metrics.get(name).family.pooled]
    qids, values = metrics.per_query(evaluated.table, ranking, qrels=evaluated.qrels, source=evaluated.source)
    return {str(qid): {name: float(values[name][i]) for name in ranking} for i, qid in enumerate(qids)}


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


def evaluate_file(
    *,
    run: Path | None = None,
    qrels: Path | None = None,
    predictions: Path | None = None,
    names: Sequence[str] | None = None,
    probes: Sequence[str] = (),
    dev: Path | None = None,
    dev_run: Path | None = None,
    dev_qrels: Path | None = None,
    seed: int = 0,
    strict: bool = False,
    probabilities: bool | None = None,
    confidences: Sequence[str] | None = None,
) -> dict[str, float]:
    """Metric means for a run + qrels pair, or for a predictions Parquet file, plus ``probes``.

    ``names`` are ir-measures names (default ``R@1 R@5 P@1 AP RR nDCG@10``, and ``ECE``, Penha &
    Hauff, 2021's balanced one, and ``ECE.all``, every candidate pooled, for probabilities). A TREC
    run's scores are probabilities only with ``probabilities`` (checked to lie in [0, 1]); a
    predictions file carries its own flag, which ``probabilities`` overrides. A predictions file
    is its own qrels: every query in it counts, including those with no relevant candidate (as in
    ir-measures).

    ``probes`` (``bench.probes``) score the same queries; the dev split (``dev``, a predictions
    file, or ``dev_run`` with ``dev_qrels``) is the same ranker on a development split: RA's b is
    chosen there and the abstention learners are fitted there (without it: no RA choice, and 80/20
    splits of the file for the learners). ``confidences`` are the abstention probe's functions;
    reference-free ones alone (u_max, u_std, u_1-2) are scored on the whole table. Notes on what a
    probe left out go to the ``bench.evaluate`` logger (stderr). ``strict`` refuses a TREC file
    that lists a (qid, docno) twice instead of keeping its last line. Every key spells a metric as
    ir-measures does (``nAUC.nDCG@10.u_max``; MLflow's spelling is made in ``bench.tracking``):

    ==============  ============================================================================
    option          keys (m: a metric, u: a confidence function)
    ==============  ============================================================================
    (always)        the metrics' names: ``R@1 R@5 P@1 AP RR nDCG@10`` (and ``ECE``, ``ECE.all``)
    --calibration   ``ECE``, ``ECE.all``, ``ECE.adaptive``, ``ERCE``, ``ECE.nonrel_<k>`` (k = 1, 2, 5, 9)
    --risk          ``CVaR.optimistic.<m>``, ``CVaR.pessimistic.<m>`` (m: R@1 AP RR nDCG@10) and
                    ``<…>.p_value``; with a dev split also ``RA.b``, ``RA.<m>``, ``RA.<m>.p_value``
    --abstention    ``nAUC.<m>.<u>``, ``AUC.<m>.<u>``, ``AUC.<m>.oracle``, ``AUC.<m>.random``
                    (m: AP nDCG@10 RR; u: u_max u_std u_1-2 u_lin u_log u_mah u_rf u_mlp,
                    and u_mean_var u_top_var for S > 1 draws), ``threshold.rate_MAE.<r>.<u>``,
                    ``threshold.AP_MAE.<r>.<u>`` (r: 10 50 90), ``break_even.AP``
    --nota          ``NOTA.F1.mean``, ``NOTA.F1.mean.std`` and, for S > 1 draws,
                    ``NOTA.F1.mean_var``, ``NOTA.F1.mean_var.std``, ``NOTA.p_value``
    --cutoff        ``cutoff.F1.oracle``, ``cutoff.F1_ratio.scores`` and, for S > 1 draws,
                    ``cutoff.F1_ratio.uncertainty``, ``cutoff.p_value``
    ==============  ============================================================================
    """
    evaluated = read_inputs(
        run=run, qrels=qrels, predictions=predictions, strict=strict, probabilities=probabilities
    )
    reference = read_dev(dev, dev_run, dev_qrels, strict, probabilities, probes)
    return evaluate_inputs(evaluated, names, probes, reference, seed, confidences)


def read_dev(
    dev: Path | None,
    dev_run: Path | None,
    dev_qrels: Path | None,
    strict: bool,
    probabilities: bool | None,
    probes: Sequence[str],
) -> Evaluated | None:
    """The dev split: a predictions file (``--dev``) or a TREC run with its qrels; refused unread
    where none of ``probes`` reads it."""
    given = [str(path) for path in (dev, dev_run, dev_qrels) if path is not None]
    if not given:
        return None
    if not set(probes) & set(DEV_PROBES):  # only the probes that tune on a dev split read one
        raise RankuqError(
            f"the dev split ({', '.join(given)}): only the {' and '.join(DEV_PROBES)} probes read one; "
            f"add --{' or --'.join(DEV_PROBES)}, or drop the dev files"
        )
    return read_inputs(
        run=dev_run,
        qrels=dev_qrels,
        predictions=dev,
        strict=strict,
        probabilities=probabilities,
        flags=("--dev-run", "--dev-qrels", "--dev"),
    )


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
