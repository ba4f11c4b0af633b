"""The full-scale GPU grids' call (scripts/gpu_fullscale.sh run → rankuq/bench/benchmarks/gpu/fullscale.py)
on the CPU with the tiny random BERT and a tiny grid: what comes back fits the device tool (at most 8
files of at most 16 MiB), unpacks into a run directory that findings reads; and `rankuq run --plan`
works for every full-scale grid."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rankuq.bench.benchmarks.gpu.fullscale import GRID_FOLDER, MAX_FILE_MIB, PARTS, keep_tail, pack, unpack
from rankuq.bench.cli.main import main
from rankuq.bench.config.grid import load_grid
from rankuq.bench.findings.runs import read_finished_run
from rankuq.bench.results.provenance import CURRENT

REPO = Path(__file__).resolve().parents[3]
FULL_SCALE = sorted(GRID_FOLDER.glob("*.yaml"))
TINY_GRID = {  # the script's path at the smallest size: bm25 and a one-epoch tiny bert on 8 questions
    "name": "paper002",
    "tasks": ["wikiqa"],
    "methods": {"bm25": {}, "bert": {}},
    "seeds": [0],
    "baseline": "bert",
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"ns": "native", "negatives": 1, "epochs": 1, "max_queries": 8, "precision": "bf16"},
    "eval": {"probes": ["abstention"]},
    "resources": {"trainer": "trial", "cpus_per_trial": 0.5},
}


def test_the_parts_name_every_full_scale_grid_once_by_its_paper_grids_name():
    assert sorted(name for names in PARTS.values() for name in names) == sorted(p.stem for p in FULL_SCALE)
    for path in FULL_SCALE:
        spec, _ = load_grid(path)
        assert spec.name == path.stem  # findings matches claims to runs by the grid's name
        assert spec.model.max_length == 128 and spec.train.precision == "bf16"
        assert spec.train.max_queries is None  # every training query
        assert 0 < spec.resources.gpus_per_trial < 1  # members packed on the one GPU


@pytest.mark.parametrize("path", FULL_SCALE, ids=[path.stem for path in FULL_SCALE])
def test_plan_works_for_every_full_scale_grid(path, tmp_path, capsys):
    main(["run", str(path), "--plan", "--run-dir", str(tmp_path / "run")])
    text = capsys.readouterr().out
    assert text.startswith(f"grid {path.stem}:") and "GPU-hours" in text
    assert not (tmp_path / "run").exists()


def test_a_large_archive_is_cut_in_pieces_that_unpack_whole(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name in ("grid.yaml", "leaderboard.csv", "seeds.csv", "queries.parquet", "machine.json"):
        (run_dir / name).write_bytes(os.urandom(2**20))  # random: xz cannot shrink it
    (run_dir / "compute.json").write_text('{"invocations": []}')
    monkeypatch.setattr("rankuq.bench.benchmarks.gpu.fullscale.MAX_FILE_MIB", 2)
    out = tmp_path / "out"
    out.mkdir()
    files = pack({"g": run_dir}, out)
    assert len(files) == 3 and all(path.stat().st_size <= 2 * 2**20 for path in files)
    read = []
    # random bytes are no run
    monkeypatch.setattr("rankuq.bench.findings.runs.read_finished_run", read.append)
    assert unpack(out, tmp_path / "into") == [tmp_path / "into" / "g"] == read
    assert (tmp_path / "into" / "g" / "seeds.csv").read_bytes() == (run_dir / "seeds.csv").read_bytes()


# rankuq run in its own process, its own Ray: 103-208 s on the loaded 2-core machine (2026-11-27)
@pytest.mark.slow
def test_the_call_runs_a_tiny_grid_and_brings_back_a_run_directory_findings_reads(tmp_path):
    grid = tmp_path / "tiny.yaml"
    grid.write_text(yaml.safe_dump(TINY_GRID))
    out = tmp_path / "out"
    out.mkdir()
    env = {
        **os.environ,
        "OUT": str(out),
        "PYTHON": sys.executable,
        "RANKUQ_FULLSCALE_LOCAL": "1",
        "RANKUQ_FULLSCALE_GRID": str(grid),
    }
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "gpu_fullscale.sh"), "run", "1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:] + (out / "fullscale.log").read_text()[-3000:]
    assert json.loads(done.stdout.splitlines()[-1])["outcomes"] == {"paper002": "finished"}
    files = sorted(out.iterdir())
    assert [path.name for path in files] == ["fullscale.json", "fullscale.log", "results.tar.xz"]
    assert len(files) <= 8 and all(path.stat().st_size <= MAX_FILE_MIB * 2**20 for path in files)
    summary = json.loads((out / "fullscale.json").read_text())
    assert summary["machine"]["device"] == "cpu"
    members = summary["grids"]["paper002"]["members"]
    assert len(members) == 1 and members[0]["seconds_loading"] > 0
    [run_dir] = unpack(out, tmp_path / "results" / "gpu")
    assert sorted(path.name for path in run_dir.iterdir()) == sorted(
        ["grid.yaml", "leaderboard.csv", "seeds.csv", "queries.parquet", "machine.json", "compute.json"]
    )
    assert json.loads((run_dir / "compute.json").read_text())["invocations"][0]["outcome"] == "finished"
    run = read_finished_run(run_dir)
    assert run.spec.name == "paper002" and run.queries is not None
    assert run.provenance is not None and run.provenance.status == CURRENT  # this checkout's keys
    assert set(run.board["method"]) == {"bm25", "bert"}


def test_a_long_log_keeps_its_end(tmp_path):
    log = tmp_path / "fullscale.log"
    log.write_bytes(b"a" * 100 + b"the end\n")
    keep_tail(log, 8)
    assert log.read_bytes().endswith(b"\nthe end\n") and len(log.read_bytes()) < 50
    keep_tail(log, 1000)  # under the limit: left alone
    assert log.read_bytes().endswith(b"the end\n")


def test_call_2_without_call_1_on_the_machine_stops_at_once_saying_so(tmp_path):
    """The script in a tree with no .gpu-env/, as on a machine where call 1 did not run."""
    (tmp_path / "scripts").mkdir()
    script = shutil.copy(REPO / "scripts" / "gpu_fullscale.sh", tmp_path / "scripts")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "OUT": str(out), "RANKUQ_FULLSCALE_LOCAL": "0"}
    done = subprocess.run(["bash", str(script), "run", "1"], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "call 1 (install) did not run on this machine" in done.stderr
    assert not list(out.iterdir())  # nothing half made
