"""A grid's leaderboard on the terminal, as ``rankuq run``, ``rankuq evaluate --model`` and
``rankuq leaderboard`` show it."""

from typing import TYPE_CHECKING

from rankuq.bench.cli.common import PIPED_WIDTH, print_note, stdout_console

if TYPE_CHECKING:
    from rankuq.bench.results.boards import Board


def show_board(board: "Board", columns: list[str] | None = None) -> None:
    """The board's per-condition tables (``columns``: the metrics shown; else those that fit the
    width) and their footnote, wrapped, on the terminal."""
    from rankuq.bench.results.leaderboard import footnote
    from rankuq.bench.results.rendering import rich_tables

    console = stdout_console()
    fitted = None if console.width == PIPED_WIDTH or columns else console.width
    for table in rich_tables(board, fitted, columns):
        console.print(table)
    print_note(footnote(board.table, changes=False))
