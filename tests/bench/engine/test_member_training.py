"""One member trained in this process: a report and a checkpoint every epoch, early stopping, refusals."""

from pathlib import Path
from typing import Any

import pytest

from rankuq.bench.config.grid import parse_grid
from rankuq.bench.engine.member_training import epoch_means, fine_tune_member
from rankuq.bench.planning.jobs import TrainJob
from rankuq.bench.planning.plan import plan
from rankuq.bench.rundir.layout import RunLayout
from rankuq.tasks import data_root
from rankuq.tasks.shards import build_shards

GRID: dict[str, Any] = {
    "tasks": ["wikiqa"],
    "methods": {"bert": {}},
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 10, "epochs": 2, "batch_size": 8},
    "eval": {"probes": []},
}


def member_job(tmp_path: Path, train: dict[str, object] | None = None) -> TrainJob:
    spec, params = parse_grid({**GRID, "train": {**GRID["train"], **(train or {})}}, "test grid")
    layout = RunLayout(tmp_path)
    planned = plan(spec, params, layout)
    for lists in planned.lists:  # the shards the member reads, as the run's first stage writes them
        build_shards(lists.task, lists.split, root=data_root(), cache_dir=layout.cache, **lists.arguments())
    (job,) = planned.members.values()
    return job


def test_epoch_means_average_each_epoch_s_steps():
    assert epoch_means([1.0, 3.0, 5.0, 7.0], 2) == [2.0, 6.0]
    assert epoch_means([], 2) == []  # nothing trained yet


def test_a_member_publishes_its_metrics_and_a_checkpoint_after_every_epoch(ray_session, tmp_path):
    job = member_job(tmp_path)
    published: list[dict[str, object]] = []

    def publish(metrics: dict[str, object], save) -> None:
        folder = tmp_path / f"epoch-{metrics['epoch']}"
        folder.mkdir()
        save(folder)
        assert any(folder.iterdir()), "the checkpoint wrote nothing"
        published.append(metrics)

    def refuse(message: str) -> None:
        pytest.fail(f"refused: {message}")

    fine_tune_member(job, publish, lambda method, model: None, refuse)
    assert [m["epoch"] for m in published] == [1, 2]
    assert published[-1]["start_epoch"] == 0 and len(published[-1]["epoch_losses"]) == 2
    assert "best_epoch" not in published[-1]  # no early stopping: no dev scoring
