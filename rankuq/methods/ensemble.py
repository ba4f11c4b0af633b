"""`ensemble`: M cross-encoders trained from different seeds (S-BERT^E, Penha & Hauff, 2021, §3.2.3)."""

from collections.abc import Sequence
from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.methods.base import REGISTRY, MethodParams, NeuralMethod, relevance_probability


class EnsembleParams(MethodParams):
    M: Annotated[int, Field(ge=2, le=100, description="members, each trained as its own trial")] = 5
    bagging: bool = Field(
        False,
        description="members 1…M−1 draw their training pairs with their own seed (not Penha & Hauff, "
        "2021: its "
        "members differ only in initialisation and data order)",
    )


@REGISTRY.register
class Ensemble(NeuralMethod):
    name = "ensemble"
    description = (
        "Deep Ensemble: M members from different seeds, parallel trials (M = 5) [Penha & Hauff, 2021]"
    )
    Params = EnsembleParams
    params: EnsembleParams  # validated as Params by Method.__init__

    def members(self) -> int:
        return self.params.M

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        for model in models:
            model.eval()
        return torch.stack([relevance_probability(model(**inputs).logits) for model in models], dim=1)
