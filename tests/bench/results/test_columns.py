"""Arrow text columns: each helper as the Python string operation it replaces, row by row."""

import html

import numpy as np
import pyarrow as pa
import pytest
from markupsafe import escape

from rankuq.bench.results.columns import (
    concat,
    framed,
    in_parallel,
    joined,
    nonempty,
    padded,
    replaced,
    split,
    strings,
    text_of,
    where,
    write_pieces,
)
from rankuq.bench.results.rendering import MARKDOWN_ESCAPES, markdown_text
from rankuq.bench.results.report import HTML_ESCAPES

NAMES = ["a&b", "<i>", 'it\'s "q"', "x|y", "±†", "", "&lt;"]


def test_each_helper_does_what_python_does():
    column = strings(NAMES)
    assert concat("(", column, ")").to_pylist() == [f"({n})" for n in NAMES]
    assert concat(column, column, sep=" & ").to_pylist() == [f"{n} & {n}" for n in NAMES]
    flags = np.array([n.startswith("<") or n == "" for n in NAMES])
    assert where(flags, "yes", column).to_pylist() == [
        "yes" if f else n for f, n in zip(flags, NAMES, strict=True)
    ]
    assert nonempty(column).to_pylist() == [n != "" for n in NAMES]
    assert padded(column, 6).to_pylist() == [n.ljust(6) for n in NAMES]
    assert padded(column, 6, right=True).to_pylist() == [n.rjust(6) for n in NAMES]
    widths = np.arange(len(NAMES)) + 2  # a width per row
    assert padded(column, widths).to_pylist() == [n.ljust(w) for n, w in zip(NAMES, widths, strict=True)]
    assert padded(column, widths, right=True).to_pylist() == [
        n.rjust(w) for n, w in zip(NAMES, widths, strict=True)
    ]
    assert padded("ab", np.array([1, 4])).to_pylist() == ["ab", "ab  "]  # one string, to each width
    runs = split(concat(column, "\n")[1:], np.array([0, 2, 2, 6]))  # from a slice's offset on
    assert [run.to_pybytes().decode() for run in runs] == ['<i>\nit\'s "q"\n', "", "x|y\n±†\n\n&lt;\n"]
    assert joined(concat(column, "\n")).to_pybytes() == "".join(f"{n}\n" for n in NAMES).encode()
    assert joined(strings(["a", "b", "c"])[1:]).to_pybytes() == b"bc"  # a slice: from its offset on
    assert joined(pa.array(["a", "b", "c"], pa.string())[1:]).to_pybytes() == b"bc"  # 32-bit offsets
    assert joined(strings([])).to_pybytes() == b""
    two = [column, column]
    assert concat(*framed(two, "<", ">"), sep="|").to_pylist() == [f"<{n}|{n}>" for n in NAMES]
    assert concat(*framed([column], "<", ">")).to_pylist() == [f"<{n}>" for n in NAMES]


def test_in_parallel_keeps_the_order_and_raises_the_first_error():
    assert in_parallel(lambda n: n * n, list(range(10))) == [n * n for n in range(10)]
    assert in_parallel(str, []) == []
    with pytest.raises(ZeroDivisionError):
        in_parallel(lambda n: 1 / n, [1, 0, 2])


def test_a_document_of_pieces_is_written_as_its_text(tmp_path):
    """Python text and Arrow's UTF-8 bytes, in order: the file holds the pieces' text, as UTF-8."""
    pieces = ["# ±\n", joined(concat(strings(NAMES), "\n")), "end\n"]
    text = "# ±\n" + "".join(f"{n}\n" for n in NAMES) + "end\n"
    assert text_of(pieces) == text
    write_pieces(tmp_path / "doc.md", pieces)
    assert (tmp_path / "doc.md").read_bytes() == text.encode()
    assert list(tmp_path.iterdir()) == [tmp_path / "doc.md"]


def test_the_escapes_are_the_python_escapes_of_names():
    assert replaced(strings(NAMES), MARKDOWN_ESCAPES).to_pylist() == list(map(markdown_text, NAMES))
    assert replaced(strings(NAMES), HTML_ESCAPES).to_pylist() == [str(escape(n)) for n in NAMES]
    assert markdown_text("'") == html.escape("'") == "&#x27;"  # the two escapes differ: both are kept
