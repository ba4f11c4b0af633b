"""Placement groups of dead Ray Train controllers are removed; the driver's own (Tune's) stay."""

import ray
from ray.util.placement_group import placement_group, placement_group_table, remove_placement_group

from rankuq.bench.engine.placement_groups import remove_orphaned_placement_groups


def test_the_driver_s_own_placement_group_is_no_orphan(ray_session):
    group = placement_group([{"CPU": 0.01}])
    ray.get(group.ready(), timeout=60)
    try:
        assert remove_orphaned_placement_groups() == 0
        assert placement_group_table(group)["state"] == "CREATED"
    finally:
        remove_placement_group(group)
