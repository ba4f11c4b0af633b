"""What every ``rankuq`` verb shares: exit codes, option parsing helpers, tables."""

import os
import shlex
import sys
import textwrap
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C
EXIT_TERMINATED = 143  # ... and by SIGTERM (what `timeout`, schedulers and `kill` send)
EXIT_BROKEN_PIPE = 141  # ... and by SIGPIPE (its reader, such as `head`, closed the pipe)
PIPED_WIDTH = 100_000  # wider than any table: rich then sizes each column to its longest cell
PROSE_WIDTH = 100  # a footnote's lines at most, piped too
# keys: bench.evaluation.blackbox
EVALUATE_PROBES = ("calibration", "risk", "abstention", "nota", "cutoff", "moments")


def comma_names(text: str) -> list[str]:
    """A comma-separated option value as its names, blanks dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def command_line(argv: list[str] | None) -> str:
    """The command as typed (``argv``: its arguments; None: this process's), as a shell reads it."""
    return shlex.join(["rankuq", *(sys.argv[1:] if argv is None else argv)])


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        """A closed pipe ends the command as ``cli`` ends it, with EXIT_BROKEN_PIPE (rich: exit 1)."""
        self.quiet = True
        raise BrokenPipeError


def stdout_console() -> Console:
    """``COLUMNS`` where set (a number), else the terminal's width on a terminal; piped (a file, CI
    logs, ``head``) tables are printed whole, never cut to the 80 columns rich assumes without one."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return _StdoutConsole(width=int(given))
    return _StdoutConsole() if sys.stdout.isatty() else _StdoutConsole(width=PIPED_WIDTH)


def print_note(text: str) -> None:
    """A footnote or other prose under a table, wrapped between words at the terminal's width (at
    most ``PROSE_WIDTH``, piped too), never cut mid-word by the terminal."""
    console = stdout_console()
    console.print(textwrap.fill(text, min(console.width, PROSE_WIDTH)), markup=False, highlight=False)


def print_table(title: str, header: list[str], rows: Sequence[Sequence[object]]) -> None:
    table = Table(title=title)
    for column in header:
        table.add_column(column)
    for row in rows:  # as text: a cell's "[y log p]" is not rich markup
        table.add_row(*(Text(str(cell)) for cell in row))
    stdout_console().print(table)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: finished work kept, one line, the shell's exit code."""


def on_sigterm(signum: int, frame: object) -> None:
    raise Terminated
