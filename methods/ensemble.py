"""`ensemble`: M cross-encoders trained from different seeds (S-BERT^E, paper 000 §3.2.3)."""

from collections.abc import Sequence
from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.methods.base import REGISTRY, MethodParams, NeuralMethod, relevance_probability


class EnsembleParams(MethodParams):
    M: Annotated[int, Field(ge=2, le=100, description="members, each trained as its own trial")] = 5


@REGISTRY.register
class Ensemble(NeuralMethod):
    name = "ensemble"
    description = "Deep Ensemble: M members from different seeds, each a parallel trial (M = 5) [000]"
    Params = EnsembleParams

    def members(self, params: EnsembleParams) -> int:
        return params.M

    def sample(
        self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor], params: EnsembleParams
    ) -> torch.Tensor:
        for model in models:
            model.eval()
        return torch.stack([relevance_probability(model(**inputs).logits) for model in models], dim=1)
