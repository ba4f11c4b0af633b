"""A board rendered: Markdown, rich terminal tables and LaTeX (booktabs), a column at a time (a board
of 200,000 rows renders in seconds)."""

import html
from itertools import repeat

import numpy as np
from rich import box
from rich.table import Table
from rich.text import Text

from rankuq.bench.results.boards import Board
from rankuq.bench.results.leaderboard import BETTER, WORSE, Cells, PaperTable, footnote

TERMINAL_ROWS = 50  # per condition: the whole table is leaderboard.md's
TERMINAL_TABLES = 20


def markdown_text(text: object) -> str:
    """A name as Markdown text: HTML escaped (Markdown passes raw HTML through) and table pipes
    escaped, so a method or condition called ``<script>…`` or ``a|b`` shows as written."""
    return html.escape(str(text)).replace("|", "\\|")


def paper_markdown(board: Board) -> str:
    parts = [f"# Leaderboard: {markdown_text(board.name)}"]
    for condition, rows in board.tables.items():
        columns = {"method": list(map(markdown_text, rows.methods)), "seeds": list(map(str, rows.seeds))}
        for metric, cells in rows.cells.items():
            value = wrapped(cells.value, cells.best, "**", "**")
            columns[metric] = wrapped(value, cells.note != "", "", " ", cells.note).tolist()
        parts.append(f"## {markdown_text(condition)}\n\n{_pipe_table(columns)}")
    parts.append(footnote(board.table))
    return "\n\n".join(parts) + "\n"


def _pipe_table(columns: dict[str, list[str]]) -> str:
    """A Markdown pipe table as tabulate's ``pipe`` format writes it (seeds right-aligned, the rest
    left; a column at least two wider than its header), one padded column at a time."""
    padded, rules = [], []
    for header, cells in columns.items():
        width = max(len(header) + 2, *map(len, cells))
        right = header == "seeds"
        pad = str.rjust if right else str.ljust
        padded.append(list(map(pad, [header, *cells], repeat(width))))
        rules.append("-" * (width + 1) + ":" if right else ":" + "-" * (width + 1))
    lines = list(map(("| " + " | ".join(["%s"] * len(padded)) + " |").__mod__, zip(*padded, strict=True)))
    return "\n".join([lines[0], "|" + "|".join(rules) + "|", *lines[1:]])


def wrapped(values: np.ndarray, where: np.ndarray, before: str, after: str, then: object = "") -> np.ndarray:
    """``before + value + after + then`` where ``where`` holds (``then``: a string or a column of
    them), the value itself elsewhere; only the rows that change are concatenated."""
    out = values.copy()
    tail = then[where] if isinstance(then, np.ndarray) else then
    out[where] = before + values[where] + after + tail
    return out


def rich_tables(board: Board) -> list[Table]:
    """One compact table per condition: a row per method (its seed count below its name), a column
    per metric; each cell the mean with its significance mark and, below it, ± the std (the
    relative changes are the reports'). A terminal shows the first ``TERMINAL_ROWS`` methods of the
    first ``TERMINAL_TABLES`` conditions; the caption says how many more leaderboard.md has."""
    tables = []
    conditions = board.tables
    for condition, rows in list(conditions.items())[:TERMINAL_TABLES]:
        # No vertical rules, one space between columns: thirteen metrics fit 120 terminal columns.
        more = len(rows.methods) - TERMINAL_ROWS
        caption = f"… {more:,} more methods: see leaderboard.md" if more > 0 else None
        table = Table(title=f"{board.name}: {condition}", caption=caption, box=box.SIMPLE_HEAD, padding=0)
        table.add_column("method", justify="left")
        for metric in rows.cells:
            table.add_column(metric, justify="right", min_width=6)
        for row, (method, seeds) in enumerate(zip(rows.methods[:TERMINAL_ROWS], rows.seeds, strict=False)):
            count = "1 seed" if str(seeds) == "1" else f"{seeds} seeds"
            name = Text.assemble(str(method), ("\n", ""), (count, "dim"))
            table.add_row(name, *(_rich(cells, row) for cells in rows.cells.values()))
        tables.append(table)
    if len(conditions) > TERMINAL_TABLES:
        tables[-1].caption = f"… {len(conditions) - TERMINAL_TABLES:,} more conditions: see leaderboard.md"
    return tables


def _rich(cells: Cells, row: int) -> Text:
    if np.isnan(cells.mean[row]):
        return Text(cells.value[row])
    mean = (f"{cells.mean[row]:.3f}", "bold" if cells.best[row] else "")
    spread = "" if np.isnan(cells.std[row]) else f"\n±{cells.std[row]:.3f}"  # NaN: one seed
    return Text.assemble(mean, cells.mark[row], spread)


LATEX_MARKS = {BETTER: r"\textsuperscript{\dag}", WORSE: r"\textsuperscript{\ddag}"}


def paper_latex(board: Board) -> str:
    """One booktabs table per condition (the layout of pandas' ``Styler.to_latex``; method and metric
    names escaped), the footnote after them; needs ``\\usepackage{booktabs}``."""
    tables = board.tables
    parts = [_latex_table(f"{board.name}: {condition}", rows) for condition, rows in tables.items()]
    footer = footnote(board.table, changes=False).replace(BETTER, r"\dag{}").replace(WORSE, r"\ddag{}")
    return "\n".join(parts) + "\n% " + footer + "\n"


def _latex_table(caption: str, rows: PaperTable) -> str:
    columns = [[latex_text(method) for method in rows.methods], list(map(str, rows.seeds))]
    for cells in rows.cells.values():
        number = np.array([value.replace("±", r"\pm") for value in cells.value], dtype=object)
        value = np.where(cells.best, r"$\mathbf{" + number + "}$", "$" + number + "$")
        value = value + np.array([LATEX_MARKS.get(mark, "") for mark in cells.mark], dtype=object)
        columns.append(np.where(np.isnan(cells.mean), "--", value).tolist())
    header = " & ".join(latex_text(name) for name in ["method", "seeds", *rows.cells])
    body = [" & ".join(row) + r" \\" for row in zip(*columns, strict=True)]
    return "\n".join(
        [
            r"\begin{table}",
            r"\centering",
            rf"\caption{{{latex_text(caption)}}}",
            rf"\begin{{tabular}}{{lr{'l' * len(rows.cells)}}}",
            r"\toprule",
            header + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )


_LATEX_SPECIALS = str.maketrans(
    {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\~{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
)


def latex_text(text: object) -> str:
    """A name as LaTeX text: its special characters escaped."""
    return str(text).translate(_LATEX_SPECIALS)
