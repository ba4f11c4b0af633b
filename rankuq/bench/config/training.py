"""Training settings of a grid (``train:``): the fine-tuning loop's hyperparameters and early stopping."""

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from rankuq.bench import metrics
from rankuq.errors import RankuqError


def unset_left_out(data: dict[str, Any], **unset: object) -> dict[str, Any]:
    """``data`` (a settings dump, part of content keys) without each key of ``unset`` that holds the
    value given there, the one that means "as before the key existed": a grid that does not use a
    newer setting keeps its content keys, and so its cached members and runs."""
    return {key: value for key, value in data.items() if key not in unset or value != unset[key]}


# The negative samplings a training or dev list can be drawn with (rankuq.tasks.negatives).
NegativeSampling = Literal["native", "judged", "random", "bm25", "dense"]


class EarlyStopping(BaseModel):
    """Score the train side's dev lists after every epoch; stop after ``patience`` epochs without a
    better ``metric`` and keep the best epoch's weights (``train.epochs`` is then the most it trains)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    patience: Annotated[int, Field(ge=1, le=10_000)] = Field(
        description="epochs without a better dev value before training stops"
    )
    metric: str = Field(
        "AP", description="the dev lists' metric; the best epoch its highest, or lowest where lower is better"
    )
    n: Annotated[int, Field(ge=2, le=1_000)] | None = Field(
        None,
        description="candidates per dev list: one relevant and n - 1 non-relevant, drawn with the train "
        "side's negative sampling (10: R_10 lists, as the papers test); None: the train side's own lists. "
        "On balanced-pair sides (n: 2) AP is a pairwise accuracy near 1 with steps of 1/queries: it "
        "picked a first epoch that ranked no better than BM25 (issue 47)",
    )
    ns: NegativeSampling | None = Field(
        None,
        description="negative sampling of the dev lists' non-relevant candidates; None: the train side's. "
        "A model trained on random negatives and tested on BM25 lists (PG-DRR, Ye et al. 2023 §4.4; "
        "GPF-BERT 2023) is chosen on dev lists like its test lists: bm25",
    )

    min_epochs: Annotated[int, Field(ge=1, le=10_000)] | None = Field(
        None,
        description="epochs trained before early stopping may stop (PyTorch Lightning's min_epochs); the "
        "best epoch is still chosen over all of them. A GP head's random output layer and the warm-up "
        "can hold its dev value flat or falling for the first epochs: with patience 2 three of gp's "
        "SemEval heads stopped at epoch 3 and kept epoch 1, barely trained (issue 47)",
    )

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return unset_left_out(handler(self), n=None, min_epochs=None, ns=None)

    @field_validator("metric")
    @classmethod
    def _ranking_metric(cls, value: str) -> str:
        try:
            metrics.get(value)
        except RankuqError as error:
            raise ValueError(str(error)) from None
        return value

    def stops(self, history: Sequence[float], epoch: int, epochs: int) -> bool:
        """Whether training stops after epoch ``epoch`` (counted from 1) of at most ``epochs``, the
        epochs' dev values ``history``: ``patience`` epochs without a better value, at least
        ``min_epochs`` trained, and not the last epoch (which ends training anyway)."""
        patience_out = len(history) - 1 - self.best_epoch(history) >= self.patience
        return patience_out and epoch >= (self.min_epochs or 0) and epoch < epochs

    def best_epoch(self, history: Sequence[float]) -> int:
        """The index of the best of the epochs' dev values ``history``: the highest, or the lowest for
        a metric whose family declares lower better; the first best epoch wins a tie."""
        values = np.asarray(history, dtype=np.float64)
        return int(np.argmin(values) if metrics.get(self.metric).lower_is_better else np.argmax(values))


class TrainConfig(BaseModel):
    """Optimisation settings shared by every trained member of a grid."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epochs: Annotated[int, Field(ge=0, le=10_000)] = Field(
        1, description="0: no training; score model.backbone, a cross-encoder checkpoint, as it is"
    )
    batch_size: Annotated[int, Field(ge=1, le=65_536)] = 16
    lr: Annotated[
        float,
        Field(gt=0, le=1, description="AdamW's step size (above 1 a step moves a weight by more than 1)"),
    ] = 5e-5
    head_lr: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None,
        description="AdamW's step size for the new relevance head (the classifier, or a head method's "
        "head where the method sets none); None: lr. A head that starts from nothing on a pretrained "
        "encoder moves too little at the encoder's rate in a few hundred steps",
    )
    warmup: Annotated[float, Field(ge=0, lt=1)] = 0.1
    max_queries: Annotated[int, Field(ge=1)] | None = Field(None, description="cap on training queries")
    negatives: Annotated[int, Field(ge=1, le=100)] = Field(
        1, description="non-relevant candidates per relevant one (Penha & Hauff, 2021: 1, balanced pairs)"
    )
    ns: NegativeSampling | None = Field(
        "bm25",
        description="negative sampling of the training lists where a shift's train side names none "
        "(Penha & Hauff, 2021: bm25); None: the task's own lists (native where it has them)",
    )
    early_stopping: EarlyStopping | None = Field(
        None, description="stop on the dev split ({patience: 2, metric: AP}); None: train every epoch"
    )
    precision: Literal["fp32", "bf16"] = Field(
        "fp32", description="bf16: the forward passes and loss in bfloat16 autocast (weights stay fp32)"
    )

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return unset_left_out(handler(self), early_stopping=None, precision="fp32", head_lr=None)
