"""One grid run, whichever way in: ``rankuq.run_grid`` (the API) and ``rankuq evaluate --model``
hold the run directory as ``rankuq run`` does (the command's own lock tests: tests/bench/cli), and
``--plan`` takes no lock. Each stops before Ray: the lock is what is checked, not the stages (the
whole grid: test_runner.py)."""

import json
import os
import shlex
import threading

import pytest

import rankuq
from rankuq.bench.cli.main import main
from rankuq.bench.engine import processes
from rankuq.bench.preflight import backbone_folder
from rankuq.bench.run import stages
from rankuq.bench.run.grid_run import GridRequest, plan_grid
from rankuq.bench.rundir.lock import HOLDER_FILE, run_dir_lock
from rankuq.errors import RankuqError

WAIT_S = 120  # generous: the first call validates the grid (imports torch) on a loaded machine


def test_a_second_run_grid_on_the_run_directory_is_refused_while_the_first_holds_it(
    tmp_path, tiny_grid, monkeypatch
):
    """Two ``rankuq.run_grid`` calls on one run directory: the first holds it (kept at the step after
    the lock, where leftover Ray processes are stopped), the second fails at once naming the first;
    once the first ends, the directory is free again."""
    run_dir = tmp_path / "run"
    holding, release = threading.Event(), threading.Event()

    def held(pid_file):
        assert (run_dir / HOLDER_FILE).exists()  # under the lock
        holding.set()
        assert release.wait(WAIT_S)
        raise RankuqError("the test ends the first run here")

    monkeypatch.setattr(processes, "stop_recorded", held)
    first: list[BaseException] = []

    def run_first() -> None:
        try:
            rankuq.run_grid(tiny_grid, run_dir)
        except BaseException as error:  # handed to the test's thread
            first.append(error)

    thread = threading.Thread(target=run_first)
    thread.start()
    try:
        assert holding.wait(WAIT_S), f"the first run never took the lock: {first}"
        in_use = rf"{run_dir} is in use by pid {os.getpid()} on .*\(rankuq.run_grid, the Python API\)"
        with pytest.raises(RankuqError, match=in_use):
            rankuq.run_grid(tiny_grid, run_dir)
    finally:
        release.set()
        thread.join(WAIT_S)
    assert [str(error) for error in first] == ["the test ends the first run here"]
    assert not run_dir.exists()  # a run directory the failed run made is removed, its lock with it
    with run_dir_lock(run_dir):
        pass


def test_run_grid_on_a_held_existing_run_directory_fails_before_the_grid_is_read(tmp_path):
    """An existing run directory is locked before the grid's validation: a bad grid is not even
    read while another run holds the directory."""
    run_dir = tmp_path / "run"
    with run_dir_lock(run_dir):
        before = sorted(run_dir.iterdir())
        with pytest.raises(RankuqError, match="is in use by"):
            rankuq.run_grid({"tasks": ["no-such-task"]}, run_dir)
        assert sorted(run_dir.iterdir()) == before


def test_evaluate_model_is_refused_on_a_held_run_directory(tmp_path, cross_encoder, capsys):
    run_dir = tmp_path / "run"
    with run_dir_lock(run_dir):
        command = ["evaluate", "--model", str(cross_encoder), "--task", "wikiqa", "--run-dir", str(run_dir)]
        assert main(command) == 2
    assert f"run directory {run_dir} is in use by pid {os.getpid()}" in capsys.readouterr().err


def test_evaluate_model_plans_once_and_names_its_command_line_as_the_holder(
    tmp_path, cross_encoder, capsys, monkeypatch
):
    """The plan printed is the plan run: the backbone is loaded once (not again by the run), and the
    lists are built over that very plan; the lock names the command as typed. Stopped at the lists."""
    loads = []
    check_backbone = backbone_folder.check_backbone

    def counted(*args, **kwargs):
        loads.append(args)
        return check_backbone(*args, **kwargs)

    def built(planned):
        built.holder = json.loads((run_dir / HOLDER_FILE).read_text())["command"]
        raise RankuqError("the test ends the run here")

    monkeypatch.setattr(backbone_folder, "check_backbone", counted)
    monkeypatch.setattr(stages, "build", built)
    run_dir = tmp_path / "run"
    command = ["evaluate", "--model", str(cross_encoder), "--task", "wikiqa", "--run-dir", str(run_dir)]
    assert main(command) == 2
    out, err = capsys.readouterr()
    assert "the test ends the run here" in err and "max length:" in out
    assert len(loads) == 1
    assert built.holder == shlex.join(["rankuq", *command])


def test_a_plan_takes_no_lock_and_writes_nothing(tmp_path, tiny_grid):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with run_dir_lock(run_dir):  # held by another run: a plan still reads
        planned = plan_grid(GridRequest(tiny_grid, run_dir))
        assert planned.layout.root == run_dir and planned.cells
    assert {path.name for path in run_dir.iterdir()} <= {".rankuq.lock"}  # the lock file, no holder


def test_the_preflight_names_a_bad_input_before_the_grid_is_read(tmp_path, tiny_grid):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(RankuqError, match=r"--run-dir .*afile is a file, not a folder"):
        rankuq.run_grid(tiny_grid, tmp_path / "afile")
    with pytest.raises(RankuqError, match="grid file not found"):
        rankuq.run_grid(tmp_path / "missing.yaml", tmp_path / "run")
    assert not (tmp_path / "run").exists()
