"""A board rendered: Markdown, rich terminal tables and LaTeX (booktabs), a column at a time (a board
of 200,000 rows renders in seconds)."""

import html
from collections.abc import Iterable, Sequence
from itertools import islice

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from rich import box
from rich.table import Table
from rich.text import Text

from rankuq.bench.results.boards import Board
from rankuq.bench.results.columns import (
    Piece,
    concat,
    framed,
    nonempty,
    padded,
    replaced,
    split,
    strings,
    text_of,
    where,
)
from rankuq.bench.results.leaderboard import BETTER, WORSE, Cells, PaperTable, footnote

TERMINAL_ROWS = 50  # per condition: the whole table is leaderboard.md's
TERMINAL_TABLES = 20


def markdown_text(text: object) -> str:
    """A name as Markdown text: HTML escaped (Markdown passes raw HTML through) and table pipes
    escaped, so a method or condition called ``<script>…`` or ``a|b`` shows as written."""
    return html.escape(str(text)).replace("|", "\\|")


# html.escape's replacements, in its order, then the table pipe (``markdown_text`` of a column).
MARKDOWN_ESCAPES = (
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ('"', "&quot;"),
    ("'", "&#x27;"),
    ("|", "\\|"),
)


def paper_markdown(board: Board) -> str:
    return text_of(markdown_pieces(board))


def markdown_pieces(board: Board) -> list[Piece]:
    """leaderboard.md in pieces (``write_pieces``): a large board's tables are hundreds of MB, and
    every concatenation copied them. The whole board's columns are formatted at once and split by
    condition (a condition at a time took minutes at 100,000 conditions)."""
    tables = board.tables
    rows = tables.rows
    columns = {"method": replaced(names(rows.methods), MARKDOWN_ESCAPES), "seeds": names(rows.seeds)}
    for metric, cells in rows.cells.items():
        value = where(cells.best, concat("**", cells.value, "**"), cells.value)
        columns[metric] = where(nonempty(cells.note), concat(value, cells.note, sep=" "), value)
    heads, bodies = _pipe_tables(columns, tables.edges)
    pieces: list[Piece] = [f"# Leaderboard: {markdown_text(board.name)}"]
    for condition, head, body in zip(tables, heads, bodies, strict=True):
        pieces += [f"\n\n## {markdown_text(condition)}\n\n", head, body]
    pieces += ["\n\n", footnote(board.table), "\n"]
    return pieces


def names(values: Iterable[object]) -> pa.Array:
    """Method names or seed counts as text, as ``str`` writes each."""
    return strings(list(map(str, values)))


def _pipe_tables(columns: dict[str, pa.Array], edges: np.ndarray) -> tuple[list[str], list[Piece]]:
    """Markdown pipe tables as tabulate's ``pipe`` format writes them (seeds right-aligned, the rest
    left; a column at least two wider than its header and as wide as its longest cell), one for each
    run of rows between ``edges``: each table's header lines and its rows."""
    starts, counts = edges[:-1], np.diff(edges)
    heads, cells, rules = [], [], []
    for header, column in columns.items():
        longest = np.maximum.reduceat(pc.utf8_length(column).to_numpy(), starts) if len(column) else counts
        width = np.maximum(len(header) + 2, longest)  # a table's
        right = header == "seeds"
        heads.append(padded(header, width, right))
        cells.append(padded(column, np.repeat(width, counts), right))
        dashes = pc.binary_repeat(pa.scalar("-", pa.large_string()), pa.array(width + 1))
        rules.append(concat(dashes, ":") if right else concat(":", dashes))
    head = concat("| ", concat(*heads, sep=" | "), " |\n|", concat(*rules, sep="|"), "|")
    return head.to_pylist(), split(concat(*framed(cells, "\n| ", " |"), sep=" | "), edges)


def rich_tables(board: Board, width: int | None = None, columns: Sequence[str] | None = None) -> list[Table]:
    """One compact table per condition: a row per method (its seed count below its name), a column
    per metric; each cell the mean with its significance mark and, below it, ± the std (the
    relative changes are the reports'). A terminal shows the first ``TERMINAL_ROWS`` methods of the
    first ``TERMINAL_TABLES`` conditions; the caption says how many more leaderboard.md has.
    ``columns`` names the metrics shown (default: all); within ``width`` terminal columns, the
    first metrics that fit beside the method names, which are never cut (the caption names the rest)."""
    tables = []
    conditions = board.tables
    for condition, rows in islice(conditions.items(), TERMINAL_TABLES):  # sliced when asked for
        # No vertical rules, one space between columns (names of several words wrap at their spaces).
        methods = rows.methods[:TERMINAL_ROWS]
        name_width = max([len("method"), *(len(str(method)) for method in methods)])
        shown = _fitting([m for m in rows.cells if columns is None or m in columns], name_width, width)
        hidden = [m for m in rows.cells if m not in shown and (columns is None or m in columns)]
        notes = []
        if len(rows.methods) > TERMINAL_ROWS:
            notes.append(f"… {len(rows.methods) - TERMINAL_ROWS:,} more methods")
        if hidden:
            notes.append(f"{len(hidden)} more columns ({', '.join(hidden)}): --columns or a wider terminal")
        caption = "; ".join(notes) + (" (all in leaderboard.md: --out)" if notes else "") or None
        table = Table(title=f"{board.name}: {condition}", caption=caption, box=box.SIMPLE_HEAD, padding=0)
        table.add_column("method", justify="left", min_width=name_width, no_wrap=True)
        for metric in shown:
            table.add_column(metric, justify="right", min_width=6)
        for row, (method, seeds) in enumerate(zip(methods, rows.seeds, strict=False)):
            count = "1 seed" if str(seeds) == "1" else f"{seeds} seeds"
            name = Text.assemble(str(method), ("\n", ""), (count, "dim"))
            table.add_row(name, *(_rich(rows.cells[metric], row) for metric in shown))
        tables.append(table)
    if len(conditions) > TERMINAL_TABLES:
        tables[
            -1
        ].caption = f"… {len(conditions) - TERMINAL_TABLES:,} more conditions: see leaderboard.md (--out)"
    return tables


def _fitting(metrics: list[str], name_width: int, width: int | None) -> list[str]:
    """The first ``metrics`` whose columns fit in ``width`` beside the method column: a metric's is
    its longest word or a cell ("0.440†", "±0.012"), whichever is wider, and a space."""
    if width is None:
        return metrics
    used, shown = name_width, list[str]()
    for metric in metrics:
        used += 1 + max(6, *(len(word) for word in metric.split()))
        if used > width and shown:
            break
        shown.append(metric)
    return shown


def _rich(cells: Cells, row: int) -> Text:
    if np.isnan(cells.mean[row]):
        return Text(cells.value[row].as_py())
    mean = (f"{cells.mean[row]:.3f}", "bold" if cells.best[row] else "")
    spread = "" if np.isnan(cells.std[row]) else f"\n±{cells.std[row]:.3f}"  # NaN: one seed
    return Text.assemble(mean, cells.mark[row].as_py(), spread)


LATEX_MARKS = {BETTER: r"\textsuperscript{\dag}", WORSE: r"\textsuperscript{\ddag}"}


def paper_latex(board: Board) -> str:
    """One booktabs table per condition (the layout of pandas' ``Styler.to_latex``; method and metric
    names escaped), the footnote after them; needs ``\\usepackage{booktabs}``."""
    return text_of(latex_pieces(board))


def latex_pieces(board: Board) -> list[Piece]:
    """``paper_latex`` in pieces (``write_pieces``), as ``markdown_pieces``: the whole board's rows
    formatted at once, split by condition."""
    tables = board.tables
    metrics = list(tables.rows.cells)
    header = " & ".join(latex_text(name) for name in ["method", "seeds", *metrics])
    head = [rf"\begin{{tabular}}{{lr{'l' * len(metrics)}}}", r"\toprule", header + r" \\", r"\midrule", ""]
    tail = "\n".join([r"\bottomrule", r"\end{tabular}", r"\end{table}", "", ""])
    pieces: list[Piece] = []
    for condition, body in zip(tables, split(_latex_rows(tables.rows), tables.edges), strict=True):
        caption = rf"\caption{{{latex_text(f'{board.name}: {condition}')}}}"
        pieces += ["\n".join([r"\begin{table}", r"\centering", caption, *head]), body, tail]
    footer = footnote(board.table, changes=False).replace(BETTER, r"\dag{}").replace(WORSE, r"\ddag{}")
    return [*pieces, "% ", footer, "\n"]


def _latex_rows(rows: PaperTable) -> pa.Array:
    """A table's rows in LaTeX, a line each."""
    columns = [strings([latex_text(method) for method in rows.methods]), names(rows.seeds)]
    for cells in rows.cells.values():
        number = replaced(cells.value, [("±", r"\pm")])
        value = where(cells.best, concat(r"$\mathbf{", number, "}$"), concat("$", number, "$"))
        mark = replaced(cells.mark, LATEX_MARKS.items())
        columns.append(where(np.isnan(cells.mean), "--", concat(value, mark)))
    return concat(*framed(columns, "", " \\\\\n"), sep=" & ")


_LATEX_SPECIALS = str.maketrans(
    {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\~{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
)


def latex_text(text: object) -> str:
    """A name as LaTeX text: its special characters escaped."""
    return str(text).translate(_LATEX_SPECIALS)
