"""Arrow text columns: each helper as the Python string operation it replaces, row by row."""

import html

import numpy as np
from markupsafe import escape

from rankuq.bench.results.columns import concat, joined, longest, nonempty, padded, replaced, strings, where
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
    assert longest(column) == 8 and longest(strings([])) == 0
    assert padded(column, 6).to_pylist() == [n.ljust(6) for n in NAMES]
    assert padded(column, 6, right=True).to_pylist() == [n.rjust(6) for n in NAMES]
    assert joined(concat(column, "\n")) == "".join(f"{n}\n" for n in NAMES)
    assert joined(strings(["a", "b", "c"])[1:]) == "bc"  # a slice: from its offset on


def test_the_escapes_are_the_python_escapes_of_names():
    assert replaced(strings(NAMES), MARKDOWN_ESCAPES).to_pylist() == list(map(markdown_text, NAMES))
    assert replaced(strings(NAMES), HTML_ESCAPES).to_pylist() == [str(escape(n)) for n in NAMES]
    assert markdown_text("'") == html.escape("'") == "&#x27;"  # the two escapes differ: both are kept
