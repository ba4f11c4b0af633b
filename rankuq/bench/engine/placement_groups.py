"""Placement groups that Ray Train controllers left behind when they died, found and removed while
members train (``OrphanSweeper``, a Tune callback of ``bench.engine.members.train_members``)."""

import logging
import time

import ray
from ray import tune
from ray.tune.experiment import Trial


def remove_orphaned_placement_groups() -> int:
    """Remove this driver's placement groups whose creating actor is dead; return how many.

    A TorchTrainer's controller creates its workers' placement group, which lives as long as the
    driver's job. When a node was lost (the cluster benchmark), Ray Train 2.60's controllers aborted
    without removing theirs: 4 groups of the lost node's members stayed, the GCS moved them onto the
    surviving node, where they held its GPU shares, and scoring waited on them forever. Ray's own
    record says whose a group was (``creator_actor_dead``); Tune's are the driver's and stay.
    """
    from ray._private.state import state
    from ray.core.generated import gcs_pb2
    from ray.util.placement_group import PlacementGroup

    # A generated protobuf class, which Ray's type information leaves out.
    record = gcs_pb2.PlacementGroupTableData  # type: ignore[attr-defined]
    job = ray.get_runtime_context().get_job_id()
    removed = 0
    for raw in state._connect_and_get_accessor().get_placement_group_table():
        group = record.FromString(raw)
        orphaned = group.creator_actor_dead and group.creator_actor_id.strip(b"\xff")  # nil: a driver's
        if orphaned and group.creator_job_id.hex() == job and group.state != record.REMOVED:
            ray.util.remove_placement_group(PlacementGroup(ray.PlacementGroupID(group.placement_group_id)))
            removed += 1
    return removed


class OrphanSweeper(tune.Callback):
    """Every few seconds while members train, and at the end: ``remove_orphaned_placement_groups``."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s, self.last = every_s, 0.0

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        if time.monotonic() - self.last > self.every_s:
            self.last = time.monotonic()
            self._sweep()

    def on_experiment_end(self, trials: list[Trial], **info: object) -> None:
        self._sweep()

    def _sweep(self) -> None:
        try:  # Ray's private GCS accessor: a change there must not stop a grid
            if removed := remove_orphaned_placement_groups():
                logging.getLogger(__name__).warning(
                    "removed %d placement group(s) left by dead Ray Train controllers", removed
                )
        except Exception as error:
            logging.getLogger(__name__).warning("placement-group sweep skipped: %s", error)
            self.every_s = float("inf")

    def __getstate__(self) -> dict[str, float]:
        return {"every_s": self.every_s, "last": 0.0}
