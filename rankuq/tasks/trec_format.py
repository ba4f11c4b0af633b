"""TREC run and qrels files, the one reader of each: fast, strict parsing with one clear error per bad
line (file, line, how to fix it). Read by ``rankuq evaluate`` (bench.evaluation.blackbox), by the TREC
collections' judgments (tasks.trec) and by the first-stage TREC runs a grid reranks (tasks.negatives)."""

import codecs
import gzip
import logging
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankuq.errors import RankuqError

TREC_RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid 0 docno relevance"


# Bounds of what is read into memory: the largest TREC run trec_eval users share (an MS MARCO top-1000 one
# of 7k queries) is about 0.4 GiB; a TREC line holds six short fields.
MAX_TREC_BYTES = 2 << 30
MAX_LINE_BYTES = 1 << 16
_CHUNK_BYTES = 1 << 22
_BLANK = np.zeros(256, dtype=bool)
_BLANK[list(b" \t\n\r\x0b\x0c")] = True  # the bytes that bytes.split() splits on


def read_trec_run(path: Path, strict: bool = False, lines: bool = False) -> pa.Table:
    """Read a TREC run (``qid Q0 docno rank score tag``, whitespace-separated, ``.gz`` allowed).

    Returns columns qid, cid (the docno), score: float64. The rank column is ignored, as
    trec_eval ignores it; blank lines and a leading UTF-8 BOM are skipped. Malformed lines and
    non-finite scores raise a RankuqError naming the file and line. A docno listed twice for one
    query keeps its last line, as ir-measures and ranx do, with one warning (``strict``: an error).
    ``lines``: a column ``line`` besides, each row's line number in the file (the first is 1).
    """
    numbers, fields = _read_fields(path, TREC_RUN_LAYOUT)
    scores = _numbers(path, numbers, fields[4], "score", np.float64)
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise RankuqError(
            f"{path}, line {numbers[bad[0]]}: score {fields[4][bad[0]].decode()} is not finite; "
            "give every document a finite score"
        )
    return _trec_table(path, numbers, fields, {"score": pa.array(scores)}, strict, lines)


def read_trec_qrels(
    path: Path, strict: bool = False, lines: bool = False, negative_as_zero: bool = False
) -> pa.Table:
    """Read TREC qrels (``qid 0 docno relevance``, whitespace-separated, ``.gz`` allowed).

    Returns columns qid, cid (the docno), label: int8. Relevance must be an integer in 0..127
    (map negative grades to 0 first, or read with ``negative_as_zero``: TREC's junk grades, as a
    collection's own judgments are read); malformed lines raise a RankuqError naming the file and
    line. A docno judged twice for one query and ``lines`` are handled as in ``read_trec_run``.
    """
    numbers, fields = _read_fields(path, QRELS_LAYOUT)
    labels = _numbers(path, numbers, fields[3], "relevance", np.int64)
    if negative_as_zero:
        labels = np.maximum(labels, 0)
    bad = np.flatnonzero((labels < 0) | (labels > np.iinfo(np.int8).max))
    if bad.size:
        raise RankuqError(
            f"{path}, line {numbers[bad[0]]}: relevance {labels[bad[0]]} is outside 0..127; "
            + ("map negative grades to 0 (non-relevant)" if labels[bad[0]] < 0 else "rescale the grades")
        )
    return _trec_table(path, numbers, fields, {"label": pa.array(labels.astype(np.int8))}, strict, lines)


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
    path: Path,
    numbers: np.ndarray,
    fields: list[list[bytes]],
    values: dict[str, pa.Array],
    strict: bool,
    lines: bool,
) -> pa.Table:
    """qid, cid (the docno), one value column (and ``line``, the line numbers). A (qid, docno) on
    several lines keeps its last line, as ir-measures and ranx (pytrec_eval's dicts) do, with one
    warning naming the count and the first repeat; ``strict`` refuses it, as trec_eval does."""
    qid, cid = (pa.array(fields[i], pa.binary()).cast(pa.string()) for i in (0, 2))
    table = pa.table({"qid": qid, "cid": cid, **values, **({"line": pa.array(numbers)} if lines else {})})
    if table.group_by(["qid", "cid"]).aggregate([]).num_rows == table.num_rows:
        return table
    pairs = table.select(["qid", "cid"]).to_pandas()
    repeats = pairs.duplicated(keep="first").to_numpy()
    row = int(np.argmax(repeats))
    first = int(np.flatnonzero((pairs.qid == pairs.qid[row]) & (pairs.cid == pairs.cid[row]))[0])
    place = (
        f"{path}, line {numbers[row]}: docno {pairs.cid[row]} appears again for qid {pairs.qid[row]} "
        f"(first on line {numbers[first]})"
    )
    if strict:
        raise RankuqError(f"{place}; keep one line per (qid, docno), or drop --strict to keep the last")
    logging.getLogger(__name__).warning(
        "%s; %d repeated (qid, docno) lines in all: the last line of each is kept, as ir-measures and "
        "ranx do (rankuq evaluate --strict refuses them)",
        place,
        int(repeats.sum()),
    )
    return table.filter(pa.array(~pairs.duplicated(keep="last").to_numpy()))
