"""Members trained data-parallel: two Ray Train workers (gloo on CPU) train one member with DDP."""

import pytest

from bench.errors import RankuqError
from bench.grid import parse_grid
from bench.runner import GridRun

DATA_PARALLEL = {
    "tasks": ["wikiqa"],
    "methods": {"bert": {}},
    "model": {"backbone": "tiny", "max_length": 32},
    "train": {"max_queries": 30},
    "eval": {"probes": [], "dev_split": None},
    "resources": {"workers_per_trial": 2, "cpus_per_trial": 1},
}


def test_a_member_trains_on_two_data_parallel_workers(ray_session, tmp_path):
    spec, params = parse_grid(DATA_PARALLEL, "test grid")
    board = GridRun(spec, params, tmp_path).run()
    assert board.set_index("method").loc["bert", "R@1"] > 0
    (member,) = (tmp_path / "models").iterdir()
    assert (member / "model.pt").stat().st_size > 0  # rank 0's checkpoint


@pytest.mark.parametrize("gpus", [0.5, 1, 3])
def test_data_parallel_workers_need_whole_gpus_each(gpus):
    grid = {**DATA_PARALLEL, "resources": {"workers_per_trial": 2, "gpus_per_trial": gpus}}
    with pytest.raises(
        RankuqError, match=rf"resources: gpus_per_trial {gpus:g} over workers_per_trial 2 gives"
    ):
        parse_grid(grid, "grid.yaml")


@pytest.mark.parametrize(("workers", "gpus"), [(2, 4), (2, 0), (1, 0.25)])
def test_whole_gpus_per_worker_or_a_fraction_for_one_worker_are_valid(workers, gpus):
    grid = {**DATA_PARALLEL, "resources": {"workers_per_trial": workers, "gpus_per_trial": gpus}}
    spec, _ = parse_grid(grid, "grid.yaml")
    assert (spec.resources.workers_per_trial, spec.resources.gpus_per_trial) == (workers, gpus)
