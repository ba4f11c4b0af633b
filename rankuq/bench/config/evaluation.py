"""Evaluation settings of a grid (``eval:``): the tested and dev splits, the probes, scoring's batches
and precision."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rankuq.bench.probes import DEFAULT_PROBES, PROBES


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    split: str = "test"
    # Rows per scorer call; neural scorers sort them by length into forward passes of 64.
    batch_size: Annotated[int, Field(ge=1, le=1 << 20)] = 512
    # Standard practice scores ranking metrics only on queries with a relevant candidate.
    include_nota: bool = False
    probes: list[str] = list(DEFAULT_PROBES)
    dev_split: str | None = Field(
        "dev", description="split whose predictions choose RA's b and fit the abstention learners"
    )
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto", description="neural scoring in bfloat16 autocast (bf16) or not; auto: bf16 on a GPU only"
    )

    @field_validator("probes")
    @classmethod
    def _known_probes(cls, value: list[str]) -> list[str]:
        for name in value:
            PROBES.get(name)
        return value

    @model_validator(mode="after")
    def _dev_is_not_the_tested_split(self) -> "EvalConfig":
        if self.dev_split == self.split:
            raise ValueError(
                f"dev_split '{self.dev_split}' is the tested split; name another split, or null to let "
                "the probes fit on a held-out part of the tested split"
            )
        return self
