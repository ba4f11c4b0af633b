"""Typed job specs: what crosses into Ray (a trial, a Train worker, a scoring task, a fit task).

They carry the grid's typed settings (``ModelConfig``, ``TrainConfig``, the method's parameters)
while the driver plans and sequences; ``to_dict`` turns one into plain data at the Ray boundary and
``from_dict`` validates it back, in the one entry point of each kind of job (``bench.engine``). The
method's parameters are validated by the method a job names.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, JsonValue, SerializeAsAny, ValidationInfo, field_validator

from rankuq import methods
from rankuq.backbone import ModelConfig
from rankuq.bench.config.training import TrainConfig
from rankuq.methods.base import Fitted, MethodParams


class Spec(BaseModel):
    """The plain-data pair shared by the job specs: a field a newer version dropped is ignored, one it
    added takes its default."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    def to_dict(self) -> dict[str, object]:
        return self.model_dump()

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Self:
        return cls.model_validate(data)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def _params_of_method(value: object, info: ValidationInfo) -> MethodParams:
    """A job's ``params`` (a dict at the Ray boundary) validated by the method it names."""
    if isinstance(value, MethodParams):
        return value
    if not isinstance(value, dict):
        raise ValueError(f"a method's parameters are a mapping, got {value!r}")
    return methods.create(str(info.data["method"]), value).params


class TrainJob(Spec):
    """One member to train: ``method``'s model (the trainer: a method with its own head or loss, or
    `bert` for the shared cross-encoder) on the shards' lists under ``seed``."""

    key: str  # content key: the member's folder under RUN_DIR/models
    method: str
    params: SerializeAsAny[MethodParams]  # the trainer's parameters (`bert`'s defaults for its shared model)
    shards: str
    seed: int
    model: ModelConfig
    train: TrainConfig
    cpus: float
    gpus: float
    workers: int
    trainer: str = "train"  # ResourcesConfig.trainer: a Ray Train TorchTrainer, or the Tune trial itself
    pairs_seed: int = 0  # draws the training pairs: the data seed, or the member's seed with bagging
    storage: str = ""  # Tune/Train storage (RUN_DIR/ray), set when the job is handed to Ray
    dev_shards: str = ""  # the train side's dev lists, scored after every epoch for early stopping
    dev_batch_size: int = 512

    _params = field_validator("params", mode="before")(_params_of_method)


class SearchTrial(Spec):
    """A search trial's member: trained in the Tune trial's own process, scored on ``dev_shards``
    after every epoch (the scheduler's time axis); it keeps no model."""

    job: TrainJob
    dev_shards: str
    metric: str
    batch_size: int


class ScorerSpec(Spec):
    """How a scoring worker builds its scorer: the method with its parameters, the backbone settings,
    the trained members' weights and, for a post-hoc method, its fitted state."""

    method: str
    params: SerializeAsAny[MethodParams]
    model: ModelConfig
    checkpoints: tuple[str, ...]
    shards: str  # the scored lists (bm25 indexes their texts)
    threads: int
    precision: str = "auto"
    fitted: Fitted | None = None

    _params = field_validator("params", mode="before")(_params_of_method)


class FitJob(Spec):
    """A post-hoc method's fit (temperature's T, …) on the dev lists, with the trained members."""

    key: str  # content key: its folder under RUN_DIR/fits
    scorer: ScorerSpec  # the method, unfitted
    shards: str  # the dev lists it fits on

    def with_threads(self, threads: int) -> "FitJob":
        """The job fitted with the torch threads its cell's scorer gets (the same numbers)."""
        return self.model_copy(update={"scorer": self.scorer.model_copy(update={"threads": threads})})


@dataclass(frozen=True)
class SearchResult:
    """What one search chose, and where its trial table lies."""

    name: str  # what was searched, e.g. "bert on wikiqa"
    metric: str
    best: dict[str, JsonValue]  # searched key → chosen value
    score: float  # the best trial's dev metric at its last epoch
    trials: int
    stopped: int  # trials the scheduler stopped before the last epoch
    folder: Path
    cached: bool

    def line(self) -> str:
        """The console's line for this search."""
        chosen = ", ".join(f"{key}={_short(value)}" for key, value in self.best.items())
        stopped = f" ({self.stopped} stopped early)" if self.stopped else ""
        return (
            f"[bold]search[/] {self.name}: {self.trials} trials{stopped}, "
            f"best dev {self.metric} {self.score:.4f} at {chosen}" + (" (cached)" if self.cached else "")
        )


def _short(value: JsonValue) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
