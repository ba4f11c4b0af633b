"""What every ``rankuq`` verb shares: exit codes, option parsing helpers, tables."""

from rich.console import Console
from rich.table import Table

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # the shell's code for a command stopped by Ctrl-C
EXIT_TERMINATED = 143  # ... and by SIGTERM (what `timeout`, schedulers and `kill` send)
EVALUATE_PROBES = ("calibration", "risk", "abstention", "nota", "cutoff")  # keys: bench.evaluation.blackbox


def _names(text: str) -> list[str]:
    """A comma-separated option value as its names, blanks dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def _print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title)
    for column in header:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    Console().print(table)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: finished work kept, one line, the shell's exit code."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated
