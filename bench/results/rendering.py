"""A board rendered: Markdown, rich terminal tables and LaTeX (booktabs)."""

import html

import numpy as np
from rich import box
from rich.table import Table
from rich.text import Text

from rankuq.bench.results.boards import Board
from rankuq.bench.results.leaderboard import BETTER, WORSE, Entry, footnote, paper_tables


def markdown_text(text: object) -> str:
    """A name as Markdown text: HTML escaped (Markdown passes raw HTML through) and table pipes
    escaped, so a method or condition called ``<script>…`` or ``a|b`` shows as written."""
    return html.escape(str(text)).replace("|", "\\|")


def paper_markdown(board: Board) -> str:
    parts = [f"# Leaderboard: {markdown_text(board.name)}"]
    for condition, rows in paper_tables(board.table).items():
        shown = rows.astype(object).map(lambda cell: cell.text("**") if isinstance(cell, Entry) else cell)
        shown.index = shown.index.map(markdown_text)
        parts.append(f"## {markdown_text(condition)}\n\n{shown.reset_index().to_markdown(index=False)}")
    parts.append(footnote(board.table))
    return "\n\n".join(parts) + "\n"


def rich_tables(board: Board) -> list[Table]:
    """One compact table per condition: a row per method (its seed count below its name), a column
    per metric; each cell the mean with its significance mark and, below it, ± the std (the
    relative changes are the reports')."""
    tables = []
    for condition, rows in paper_tables(board.table).items():
        # No vertical rules, one space between columns: thirteen metrics fit 120 terminal columns.
        table = Table(title=f"{board.name}: {condition}", box=box.SIMPLE_HEAD, padding=0)
        table.add_column("method", justify="left")
        for metric in rows.columns[1:]:
            table.add_column(metric, justify="right", min_width=6)
        for method, row in rows.iterrows():
            name = Text.assemble(str(method), ("\n", ""), (f"{row.seeds} seeds", "dim"))
            table.add_row(name, *(_rich(entry) for entry in row.iloc[1:]))
        tables.append(table)
    return tables


def _rich(entry: Entry) -> Text:
    if np.isnan(entry.mean):
        return Text(entry.value)
    mean = (f"{entry.mean:.3f}", "bold" if entry.best else "")
    return Text.assemble(mean, entry.mark, f"\n±{entry.std:.3f}")


LATEX_MARKS = {BETTER: r"\textsuperscript{\dag}", WORSE: r"\textsuperscript{\ddag}"}


def paper_latex(board: Board) -> str:
    """One booktabs table per condition (pandas' ``Styler.to_latex``; method and metric names
    escaped), the footnote after them; needs ``\\usepackage{booktabs}``."""
    parts = []
    for condition, rows in paper_tables(board.table).items():
        styler = rows.reset_index().style.hide(axis="index").format(_latex, escape="latex")
        styler = styler.format_index(escape="latex", axis=1)
        caption = f"{board.name}: {condition}".translate(_LATEX_SPECIALS)
        parts.append(styler.to_latex(hrules=True, caption=caption, position_float="centering"))
    footer = footnote(board.table, changes=False).replace(BETTER, r"\dag{}").replace(WORSE, r"\ddag{}")
    return "\n".join(parts) + "\n% " + footer + "\n"


_LATEX_SPECIALS = str.maketrans(
    {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\~{}", "^": r"\^{}", "\\": r"\textbackslash{}"}
)


def _latex(cell: object) -> str:
    if not isinstance(cell, Entry):
        return str(cell)  # a method name, escaped by the Styler, or a seed count
    if np.isnan(cell.mean):
        return "--"
    value = f"{cell.mean:.3f} \\pm {cell.std:.3f}"
    value = f"$\\mathbf{{{value}}}$" if cell.best else f"${value}$"
    return value + LATEX_MARKS.get(cell.mark, "")
