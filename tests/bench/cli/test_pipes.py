"""A run or qrels piped in (``--run /dev/stdin`` after ``|``, ``<(zcat run.gz)``: an anonymous pipe
with its writer) is read by ``evaluate`` and ``compare``, which share one check; a named pipe is
refused by both in one line before anything opens it (with no writer the open would wait for ever)."""

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rankuq.bench.cli.main import main

RUN = [f"q{q} Q0 d{d} 0 {0.9 if d == q % 3 else 0.1 * d} r" for q in range(6) for d in range(3)]
QRELS = [f"q{q} 0 d{(q + q // 3) % 3} 1" for q in range(6)]


@contextmanager
def piped(lines: list[str]) -> Iterator[Path]:
    """An anonymous pipe's read end as a path, as bash's <(...) gives it, fed by a writer thread."""
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "w") as out:
            out.write("".join(f"{line}\n" for line in lines))

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        yield Path(f"/dev/fd/{read}")
    finally:
        writer.join()
        os.close(read)


def files(folder: Path) -> tuple[Path, Path]:
    run, qrels = folder / "run", folder / "qrels"
    run.write_text("".join(f"{line}\n" for line in RUN))
    qrels.write_text("".join(f"{line}\n" for line in QRELS))
    return run, qrels


def test_evaluate_reads_a_run_and_qrels_piped_in_as_it_reads_files(tmp_path: Path, capsys) -> None:
    run, qrels = files(tmp_path)
    assert main(["evaluate", "--run", str(run), "--qrels", str(qrels), "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    with piped(RUN) as run_pipe, piped(QRELS) as qrels_pipe:
        assert main(["evaluate", "--run", str(run_pipe), "--qrels", str(qrels_pipe), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == expected


def test_compare_reads_pipes_and_its_qrels_once(tmp_path: Path, capsys) -> None:
    run, _ = files(tmp_path)
    with piped(RUN) as run_pipe, piped(QRELS) as qrels_pipe:  # the qrels serve both runs
        assert main(["compare", str(run), str(run_pipe), "--qrels", str(qrels_pipe), "--json"]) == 0
    found = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert found["queries"] == 6 and found["runs"][1]["metrics"]["AP"]["p"] == 1.0  # the same run


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_named_pipe_is_refused_by_both_without_waiting(tmp_path: Path, capsys, command: str) -> None:
    run, qrels = files(tmp_path)
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)  # no writer
    argv = ["--run", str(fifo)] if command == "evaluate" else [str(run), str(fifo)]
    assert main([command, *argv, "--qrels", str(qrels)]) == 2
    error = capsys.readouterr().err.strip()
    assert f"{fifo}: a FIFO (named pipe), not a regular file" in error and "\n" not in error
