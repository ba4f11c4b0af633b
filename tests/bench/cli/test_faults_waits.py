"""What used to wait for ever (issue 32), through the real command in a fresh interpreter with a hard
timeout: an --address or --tracking-uri port that accepts and never answers or answers garbage, and
`evaluate` on a FIFO with no writer. Each: exit code 2 and one stderr line naming the address or file,
within the probe's 5 s, nothing written."""

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bench.preflight.conftest import serving

GRID = "tasks: [wikiqa]\nmethods: {bm25: {}}\n"
STARTUP_S = 30  # a fresh interpreter on the loaded 2-core host; the probe itself waits 5 s at most


def _run(tmp: Path, *options: str) -> list[str]:
    grid = tmp / "grid.yaml"
    grid.write_text(GRID)
    return ["run", str(grid), "--run-dir", str(tmp / "run"), *options]


def _fifo(tmp: Path) -> list[str]:
    fifo = tmp / "run.fifo"
    os.mkfifo(fifo)  # no writer: reading it would block for ever
    (tmp / "qrels.txt").write_text("q1 0 d1 1\n")
    return ["evaluate", "--run", str(fifo), "--qrels", str(tmp / "qrels.txt")]


# (name, what the port answers (None: nothing; no port for the FIFO), argv from tmp and port, named)
CASES: list[tuple[str, bytes | None, Callable[[Path, int], list[str]], str]] = [
    ("run --address, silent", None, lambda t, p: _run(t, "--address", f"127.0.0.1:{p}"), "not Ray"),
    ("run --address, garbage", b"hello\r\n", lambda t, p: _run(t, "--address", f"127.0.0.1:{p}"), "not gRPC"),
    (
        "run --tracking-uri, silent",
        None,
        lambda t, p: _run(t, "--tracking-uri", f"http://127.0.0.1:{p}"),
        "gave no HTTP answer (no answer within 5 s)",
    ),
    (
        "leaderboard --tracking-uri, silent",
        None,
        lambda t, p: ["leaderboard", "--tracking-uri", f"http://127.0.0.1:{p}", "--out", str(t / "out")],
        "gave no HTTP answer (no answer within 5 s)",
    ),
    (
        "leaderboard --tracking-uri, garbage",
        b"hello\r\n",
        lambda t, p: ["leaderboard", "--tracking-uri", f"http://127.0.0.1:{p}", "--out", str(t / "out")],
        "gave no HTTP answer (not HTTP: BadStatusLine",
    ),
    ("evaluate --run FIFO", None, lambda t, p: _fifo(t), "a FIFO (named pipe), not a regular file"),
]


@pytest.mark.parametrize(("answer", "build", "named"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_what_waited_for_ever_is_one_line_in_seconds(tmp_path, answer, build, named):
    with serving(answer) as port:
        argv = build(tmp_path, port)
        before = sorted(tmp_path.rglob("*"))
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "rankuq.bench.cli", *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=STARTUP_S + 5,
        )
    err = done.stderr.strip()
    assert done.returncode == 2 and err.count("\n") == 0 and "Traceback" not in err, done.stderr
    where = str(tmp_path / "run.fifo") if "FIFO" in named else f"127.0.0.1:{port}"
    assert err.startswith("rankuq: error: ") and where in err and named in err
    assert sorted(tmp_path.rglob("*")) == before
    assert time.monotonic() - started < STARTUP_S + 5
