"""Fixtures shared by the bench tests: a synthetic finished grid as `rankuq run` leaves it
(RUN_DIR/leaderboard.csv and plots/, and the same grid logged to a temporary MLflow store: the
contract of bench.results.tracking), and a real WikiQA predictions table."""

import copy
import json
import shutil
import socket
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from rankuq import tasks
from rankuq.bench.plots import line_plot, reliability_diagram
from rankuq.bench.predictions import predictions_table
from rankuq.bench.results.leaderboard import KEYS, board_columns, metrics_of
from rankuq.bench.results.mlflow_names import BASELINE_TAG, LEVEL_TAG, METRICS_TAG, ROW_TAG
from rankuq.bench.results.tracking import Tracker, cell_metrics
from rankuq.bench.run.grid_run import GridRequest, grid_run
from rankuq.bench.rundir.layout import PLOT_INDEX

NAN = np.nan
METRICS = ("R@1", "ECE", "nAUC AP u_max")
# condition, method, seeds, baseline, then mean, std, p of each metric. Hand-computed changes against
# bert: wikiqa: ensemble R@1 +10.00% †, ECE −25.00% † (lower is better), nAUC +10.00% (p = 0.5);
# bm25 R@1 −5.00%. clariq-to-wikiqa: bm25 R@1 +20.00% †; ensemble R@1 −20.00% ‡, ECE +25.00% ‡.
ROWS = [
    ("wikiqa", "bm25", 2, False, 0.38, 0.0, 0.2, NAN, NAN, NAN, NAN, NAN, NAN),
    ("wikiqa", "bert", 2, True, 0.40, 0.05, NAN, 0.20, 0.01, NAN, 0.30, 0.02, NAN),
    ("wikiqa", "ensemble", 2, False, 0.44, 0.02, 0.01, 0.15, 0.005, 0.001, 0.33, 0.01, 0.5),
    ("clariq-to-wikiqa", "bm25", 2, False, 0.30, 0.0, 0.04, NAN, NAN, NAN, NAN, NAN, NAN),
    ("clariq-to-wikiqa", "bert", 2, True, 0.25, 0.01, NAN, 0.10, 0.02, NAN, 0.20, 0.01, NAN),
    ("clariq-to-wikiqa", "ensemble", 2, False, 0.20, 0.03, 0.03, 0.125, 0.01, 0.02, 0.20, 0.03, NAN),
]
COLUMNS = [*KEYS, *board_columns(METRICS)]
KINDS = ("reliability", "risk_aversion", "abstention_nDCG_at_10")


def _plots(folder: Path) -> None:
    """Real PNGs: a reliability diagram of bert and ensemble, the other kinds for ensemble only."""
    rng = np.random.default_rng(0)
    folder.mkdir()
    index = []
    for condition in ("wikiqa", "clariq-to-wikiqa"):
        for method in ("bert", "ensemble"):
            probs = rng.random(200)
            name = f"reliability_{method}_{condition}.png"
            reliability_diagram({"seed 0": (probs, rng.random(200) < probs)}, folder / name)
            index.append({"condition": condition, "method": method, "kind": "reliability", "path": name})
        for kind in KINDS[1:]:
            name = f"{kind}_ensemble_{condition}.png"
            x = np.linspace(0, 1, 11)
            line_plot({"ensemble": (x, x**2), "random": (x, x)}, folder / name, xlabel="x", ylabel=kind)
            index.append({"condition": condition, "method": "ensemble", "kind": kind, "path": name})
    (folder / PLOT_INDEX).write_text(json.dumps(index))


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("finished") / "my-grid"
    run_dir.mkdir()
    pd.DataFrame(ROWS, columns=COLUMNS).to_csv(run_dir / "leaderboard.csv", index=False)
    _plots(run_dir / "plots")
    return run_dir


@pytest.fixture
def run_dir(finished_run: Path, tmp_path: Path) -> Path:
    """A copy a test may change."""
    return Path(shutil.copytree(finished_run, tmp_path / finished_run.name))


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a real `mlflow server`)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def log_grid(tracker: Tracker, run_dir: Path, name: str) -> None:
    """Log a run directory's board and plots as `rankuq run` does (the bench.results.tracking contract)."""
    board = pd.read_csv(run_dir / "leaderboard.csv")
    metrics = metrics_of(board)
    baseline = board.method[board.baseline].iloc[0]
    tags = {LEVEL_TAG: "grid", BASELINE_TAG: baseline, METRICS_TAG: json.dumps(metrics)}
    grid = tracker.open(f"grid-{name}", name, tags=tags)
    index = json.loads((run_dir / "plots" / PLOT_INDEX).read_text())
    for row, cell in enumerate(board.to_dict("records")):
        condition, method = cell["condition"], cell["method"]
        tags = {LEVEL_TAG: "cell", "method": method, "task": "wikiqa", "shift": condition, ROW_TAG: str(row)}
        child = tracker.open(f"cell-{name}-{row}", f"{method} × {condition}", grid, tags)
        plots = [e["path"] for e in index if (e["condition"], e["method"]) == (condition, method)]
        tracker.log(
            child,
            metrics=cell_metrics(pd.Series(cell), metrics, cell["seeds"]),  # as track logs them
            params={"seeds": cell["seeds"]},
            artifacts=tuple(run_dir / "plots" / path for path in plots),
        )
        tracker.finish(child)
    tracker.log(grid, artifacts=(run_dir / "plots" / PLOT_INDEX,))
    tracker.finish(grid)


@pytest.fixture(scope="session")
def tracking_uri(finished_run: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An MLflow store holding 'bare-grid' (no board tags), 'old-grid' (wikiqa only) and, newest,
    'my-grid' (the finished run)."""
    store = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{store / 'mlflow.db'}"
    tracker = Tracker(uri, served=True)
    tracker.finish(tracker.open("grid-bare", "bare-grid", tags={LEVEL_TAG: "grid"}))
    old = store / "old-grid"
    shutil.copytree(finished_run, old)
    board = pd.read_csv(old / "leaderboard.csv")
    board[board.condition == "wikiqa"].to_csv(old / "leaderboard.csv", index=False)
    index = json.loads((old / "plots" / PLOT_INDEX).read_text())
    (old / "plots" / PLOT_INDEX).write_text(json.dumps([e for e in index if e["condition"] == "wikiqa"]))
    log_grid(tracker, old, "old-grid")
    log_grid(tracker, finished_run, "my-grid")
    return uri


# The integration tests' tiny grid on real WikiQA (test_runner.py, test_findings.py).
TINY_GRID = {
    "name": "tiny",
    "tasks": ["wikiqa"],
    "methods": {"bm25": {}, "bert": {}, "mc_dropout": {"T": 3}, "ensemble": {"M": 2}},
    "seeds": [0, 1],
    "baseline": "bert",
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30, "batch_size": 16},
    "eval": {"split": "test", "batch_size": 128},  # the probes fit on dev
}


@pytest.fixture
def tiny_grid() -> dict:
    return copy.deepcopy(TINY_GRID)


@pytest.fixture(scope="session")
def finished(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """The tiny grid run once on real WikiQA, shared by the modules that read a finished run: its run
    directory and leaderboard."""
    run_dir = tmp_path_factory.mktemp("grid")
    return run_dir, grid_run(GridRequest(TINY_GRID, run_dir, source="test grid")).board


@pytest.fixture
def kept(finished: tuple[Path, pd.DataFrame], tmp_path: Path) -> Path:
    """What paper_runs/ keeps of the tiny run (grid.yaml, seeds.csv, leaderboard.csv, queries.parquet and
    compute.json: no plots, models or predictions), in tmp_path/results/ under the run's folder name (a
    run is named after its folder)."""
    run_dir, _ = finished
    folder = tmp_path / "results" / run_dir.name
    folder.mkdir(parents=True)
    for name in ("grid.yaml", "seeds.csv", "leaderboard.csv", "queries.parquet", "compute.json"):
        shutil.copy(run_dir / name, folder / name)
    return folder


@pytest.fixture(scope="session")
def wikiqa() -> pa.Table:
    """The real WikiQA test split (633 questions, 6,165 sentences, real NOTA questions) scored by
    a stochastic stand-in ranker: 10 draws of σ(5·overlap − 2.5 + noise), overlap = the share of
    question words in the sentence, noise with a per-candidate spread (seeded)."""
    candidates = tasks.get("wikiqa")().load("test", tasks.data_root())
    questions = [turns[0].lower().split() for turns in candidates["context"].to_pylist()]
    sentences = [text.lower().split() for text in candidates["text"].to_pylist()]
    overlap = np.array(
        [len(set(q) & set(s)) / len(set(q)) for q, s in zip(questions, sentences, strict=True)]
    )
    rng = np.random.default_rng(0)
    spread = 0.3 + 0.7 * rng.random((overlap.size, 1))
    logits = 5 * overlap[:, None] - 2.5 + spread * rng.normal(size=(overlap.size, 10))
    return predictions_table(
        candidates["qid"].to_pylist(),
        candidates["cid"].to_pylist(),
        candidates["label"].to_numpy(),
        1 / (1 + np.exp(-logits)),
    )
