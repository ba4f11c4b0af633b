"""Text columns in Arrow: a board's cells built and joined a column at a time by pyarrow's string
kernels, so a table of 200,000 rows × 13 metrics renders in a second, where a Python string per cell
took seconds per layout."""

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import TypeAlias, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankuq.atomic import staged_file

# A 200,000-row table's text is hundreds of MB; Arrow's default pool (mimalloc) took ten times as
# long as the system allocator to hand out buffers that size on the 2-core host (0.3 s against 0.03 s).
POOL = pa.system_memory_pool()
Text: TypeAlias = "pa.Array | str"  # a column, or one string for every row
In = TypeVar("In")
Out = TypeVar("Out")


def strings(values: Iterable[object]) -> pa.Array:
    """Python strings (a list or an object array) as an Arrow column."""
    return pa.array(values, type=pa.large_string(), memory_pool=POOL)


def _text(part: Text) -> pa.Array | pa.Scalar:
    return pa.scalar(part, pa.large_string()) if isinstance(part, str) else part


def concat(*parts: Text, sep: str = "") -> pa.Array:
    """Row by row ``sep.join(parts)``; a ``str`` part is the same in every row."""
    return pc.binary_join_element_wise(*map(_text, parts), _text(sep), memory_pool=POOL)


def framed(columns: list[pa.Array], before: str, after: str) -> list[pa.Array]:
    """``columns`` with ``before`` put in front of the first and ``after`` behind the last, so that
    ``concat(*framed(columns, …), sep=…)`` writes whole lines at once (framing the joined lines
    copied a table's hundreds of MB once more)."""
    first, *rest = columns
    framed_ = [concat(before, first), *rest]
    framed_[-1] = concat(framed_[-1], after)
    return framed_


def where(condition: np.ndarray | pa.Array, then: Text, otherwise: Text) -> pa.Array:
    """``then`` where ``condition`` holds, else ``otherwise``, row by row."""
    mask = condition if isinstance(condition, pa.Array) else pa.array(np.asarray(condition, dtype=bool))
    return pc.if_else(mask, _text(then), _text(otherwise), memory_pool=POOL)


def nonempty(column: pa.Array) -> pa.Array:
    """Whether each string has a character."""
    return pc.not_equal(column, _text(""))


def replaced(column: pa.Array, pairs: Iterable[tuple[str, str]]) -> pa.Array:
    """Each ``(old, new)`` of ``pairs`` replaced in turn, as chained ``str.replace`` calls do."""
    for old, new in pairs:
        column = pc.replace_substring(column, old, new, memory_pool=POOL)
    return column


def joined(lines: pa.Array) -> pa.Buffer:
    """The strings of ``lines`` one after another, as one UTF-8 buffer: the slice of the column's
    own data buffer that holds them, no copy (a large table's body is hundreds of MB; copying it,
    or decoding it only to encode it again for the file, doubled its cost)."""
    return split(lines, np.array([0, len(lines)]))[0]


def split(lines: pa.Array, edges: np.ndarray) -> list[pa.Buffer]:
    """``joined`` of each run of ``lines``, run i from row ``edges[i]`` to ``edges[i + 1]`` (a
    condition's rows of a board whose columns were formatted at once)."""
    if not len(lines):
        return [pa.py_buffer(b"") for _ in edges[1:]]
    offsets, data = lines.buffers()[1:3]
    width = np.int64 if pa.types.is_large_string(lines.type) else np.int32  # its offsets' type
    ends = np.frombuffer(offsets, width)[lines.offset : lines.offset + len(lines) + 1][edges].tolist()
    return [data.slice(start, stop - start) for start, stop in pairwise(ends)]


Piece: TypeAlias = "str | pa.Buffer"  # a document's text, or UTF-8 bytes built by Arrow


def text_of(pieces: Iterable[Piece]) -> str:
    """The pieces of a document as one ``str``."""
    return "".join(piece if isinstance(piece, str) else str(piece, "utf-8") for piece in pieces)


def write_pieces(path: Path, pieces: Iterable[Piece]) -> None:
    """The pieces of a document written to ``path`` as UTF-8, Arrow's bytes as they are; readers
    see the old file or the whole new one (``atomic``)."""
    with staged_file(path) as staging, staging.open("wb") as out:
        for piece in pieces:
            out.write(piece.encode() if isinstance(piece, str) else piece)


def padded(column: Text, width: int | np.ndarray, right: bool = False) -> pa.Array:
    """``str.ljust`` (``right``: ``rjust``) of each string to ``width`` characters; a ``width`` per
    row (an array) pads ``column`` (or one string, to as many rows) to each row's own."""
    if isinstance(width, int):
        return (pc.utf8_lpad if right else pc.utf8_rpad)(column, width, padding=" ", memory_pool=POOL)
    length = len(column) if isinstance(column, str) else pc.utf8_length(column).to_numpy()
    pad = pc.binary_repeat(_text(" "), pa.array(np.maximum(width - length, 0)), memory_pool=POOL)
    return concat(pad, column) if right else concat(column, pad)


def in_parallel(work: Callable[[In], Out], items: Sequence[In]) -> list[Out]:
    """``[work(item) for item in items]`` on a thread per core: Arrow's string kernels, numpy's
    array arithmetic and file writes release the GIL, so a large board's metrics and layouts are
    built side by side (the first error is raised, as the loop would)."""
    workers = min(len(items), os.cpu_count() or 1)
    if workers <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(work, items))
