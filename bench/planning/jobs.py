"""Typed job specs: what crosses into Ray (a trial, a Train worker, a scoring task, a fit task).

They are frozen dataclasses while the driver plans and sequences; ``to_dict`` turns one into plain
JSON-able data at the Ray boundary and ``from_dict`` back, in the one entry point of each kind of job
(``bench.engine``). Mappings inside are plain dicts of JSON values (a grid section's ``model_dump``).
"""

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Self


class Spec:
    """Plain-data conversion shared by the job specs."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{name: value for name, value in data.items() if name in known})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class TrainJob(Spec):
    """One member to train: ``method``'s model (the trainer: a method with its own head or loss, or
    `bert` for the shared cross-encoder) on the shards' lists under ``seed``."""

    key: str  # content key: the member's folder under RUN_DIR/models
    method: str
    params: dict[str, Any]  # the trainer's parameters (empty for `bert`'s shared model)
    shards: str
    seed: int
    model: dict[str, Any]
    train: dict[str, Any]
    cpus: float
    gpus: float
    workers: int
    trainer: str = "train"  # ResourcesConfig.trainer: a Ray Train TorchTrainer, or the Tune trial itself
    pairs_seed: int = 0  # draws the training pairs: the data seed, or the member's seed with bagging
    storage: str = ""  # Tune/Train storage (RUN_DIR/ray), set when the job is handed to Ray
    dev_shards: str = ""  # the train side's dev lists, scored after every epoch for early stopping
    dev_batch_size: int = 512

    def with_values(self, model: dict[str, Any], train: dict[str, Any], params: dict[str, Any]) -> "TrainJob":
        return replace(self, model=model, train=train, params=params)


@dataclass(frozen=True)
class SearchTrial(Spec):
    """A search trial's member: trained in the Tune trial's own process, scored on ``dev_shards``
    after every epoch (the scheduler's time axis); it keeps no model."""

    job: TrainJob
    dev_shards: str
    metric: str
    batch_size: int

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "SearchTrial":
        return cls(**{**data, "job": TrainJob.from_dict(data["job"])})


@dataclass(frozen=True)
class ScorerSpec(Spec):
    """How a scoring worker builds its scorer: the method with its parameters, the backbone settings,
    the trained members' weights and, for a post-hoc method, its fitted state."""

    method: str
    params: dict[str, Any]
    model: dict[str, Any]
    checkpoints: tuple[str, ...]
    shards: str  # the scored lists (bm25 indexes their texts)
    threads: int
    precision: str = "auto"
    fitted: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ScorerSpec":
        return cls(**{**data, "checkpoints": tuple(data["checkpoints"])})


@dataclass(frozen=True)
class FitJob(Spec):
    """A post-hoc method's fit (temperature's T, …) on the dev lists, with the trained members."""

    key: str  # content key: its folder under RUN_DIR/fits
    scorer: ScorerSpec  # the method, unfitted
    shards: str  # the dev lists it fits on

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "FitJob":
        return cls(**{**data, "scorer": ScorerSpec.from_dict(data["scorer"])})

    def with_threads(self, threads: int) -> "FitJob":
        """The job fitted with the torch threads its cell's scorer gets (the same numbers)."""
        return replace(self, scorer=replace(self.scorer, threads=threads))
