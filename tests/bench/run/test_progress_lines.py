"""A run in the background writes its progress to a log file: one plain line per step there (rich
draws its bars only once they stop where the console is no terminal), none on a terminal."""

import io

from rich.console import Console

from rankuq.bench.run.stages import progress


def _steps(terminal: bool) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=200)
    with progress(console, "training members", 2) as advance:
        advance("first")
        advance("second")
    return out.getvalue()


def test_a_log_file_gets_one_line_per_step():
    lines = [line for line in _steps(terminal=False).splitlines() if " after " in line]
    assert [line.split(" after ")[0] for line in lines] == [
        "training members (last: first): 1/2",
        "training members (last: second): 2/2",
    ]
    assert all(line.endswith(" s") for line in lines)


def test_a_terminal_gets_the_bar_alone():
    assert " after " not in _steps(terminal=True)
