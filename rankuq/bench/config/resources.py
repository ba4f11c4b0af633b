"""Resources of a grid (``resources:``): what each member's trial holds and where it trains."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ResourcesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cpus_per_trial: Annotated[float, Field(gt=0, le=1024)] = 1.0
    gpus_per_trial: Annotated[float, Field(ge=0, le=64)] = 0.0
    max_concurrent_trials: Annotated[int, Field(ge=1, le=10_000)] | None = None
    workers_per_trial: Annotated[
        int, Field(ge=1, le=1024, description="data-parallel Train workers per member")
    ] = 1
    # Where a member trains. "train": a Ray Train TorchTrainer (its controller, worker group and
    # helper actors: DDP and Train's worker restarts). "trial": a one-worker member in its Tune trial's
    # own process, one process instead of about six (each importing torch), which is what members of
    # seconds or minutes want; a retried trial resumes from its last epoch either way.
    trainer: Annotated[
        Literal["train", "trial"], Field(description="train: a Ray Train TorchTrainer; trial: the Tune trial")
    ] = "train"

    @model_validator(mode="after")
    def _one_worker_in_a_trial(self) -> "ResourcesConfig":
        if self.trainer == "trial" and self.workers_per_trial > 1:
            raise ValueError(
                f"trainer 'trial' trains a member in one process, but workers_per_trial is "
                f"{self.workers_per_trial}; use trainer 'train' for data-parallel members"
            )
        return self

    @model_validator(mode="after")
    def _whole_gpus_per_worker(self) -> "ResourcesConfig":
        # Two ranks on one GPU make NCCL fail ("Duplicate GPU detected"): fractions only for one worker.
        share = self.gpus_per_trial / self.workers_per_trial
        if self.workers_per_trial > 1 and share != int(share):
            raise ValueError(
                f"gpus_per_trial {self.gpus_per_trial:g} over workers_per_trial {self.workers_per_trial} "
                f"gives each data-parallel worker {share:g} GPU; give each worker whole GPUs "
                "(gpus_per_trial a multiple of workers_per_trial), or pack fractions with one worker"
            )
        return self
