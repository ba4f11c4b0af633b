"""Shared fixtures: one Ray session for the whole suite (start-up costs seconds), tiny models."""

import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("RAY_DEDUP_LOGS", "0")


@pytest.fixture(scope="session")
def ray_session() -> Iterator[None]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()
