"""Reading data files row by row; every defect becomes one RankuqError naming the file and line."""

import csv
import gzip
import json
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from rankuq.errors import RankuqError

# Failures of decompression or decoding, wherever in the file they happen.
_UNREADABLE = (OSError, EOFError, UnicodeDecodeError, zlib.error, csv.Error)


def line_error(path: Path, line: int, message: str) -> RankuqError:
    """An error about one line of a data file (the first line is 1)."""
    return RankuqError(f"{path}: line {line}: {message}")


@contextmanager
def open_text(path: Path, fix: str) -> Iterator[TextIO]:
    """``path`` as UTF-8 text (gunzipped when it ends in .gz); unreadable bytes raise, naming ``fix``."""
    kind = "gzip UTF-8" if path.suffix == ".gz" else "UTF-8"
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8-sig", newline="") as handle:
            yield handle
    except _UNREADABLE as exc:
        raise RankuqError(f"{path}: not a readable {kind} text file ({exc}); {fix}") from exc


def tsv_rows(
    handle: TextIO, path: Path, header: Sequence[str] | None = None
) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank line; a ``header`` must match the first line exactly.

    Fields are taken literally (no quoting): these files hold bare '"' inside text.
    """
    reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
    if header is not None:
        first = next(reader, None)
        if first is None or tuple(first) != tuple(header):
            raise line_error(
                path,
                1,
                f"header is {first}, expected the tab-separated columns {' '.join(header)}; "
                "use the file as released",
            )
    for row in reader:
        if row:  # tolerate blank lines, e.g. one an editor added at the end
            yield reader.line_num, row


def jsonl_rows(handle: TextIO, path: Path, keys: Sequence[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank JSON line; each must be an object with string ``keys``."""
    for line, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise line_error(path, line, f"not valid JSON ({exc.msg}); one object per line") from exc
        if not isinstance(record, dict):
            raise line_error(path, line, "not a JSON object; one object per line")
        for key in keys:
            if key not in record:
                raise line_error(path, line, f"missing string key '{key}'; expected keys {list(keys)}")
            if not isinstance(record[key], str):
                kind = "null" if record[key] is None else type(record[key]).__name__
                raise line_error(path, line, f"'{key}' is {kind} ({record[key]!r:.40}), expected a string")
        yield line, record


def require_text(path: Path, line: int, name: str, value: str) -> str:
    """``value`` stripped; empty or blank text raises, naming the field."""
    value = value.strip()
    if not value:
        raise line_error(path, line, f"empty {name}; fill it in or remove the line")
    return value
