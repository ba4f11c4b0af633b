"""`gpf`: GPF-BERT, the `sngp` ranker trained with focal loss (Ye et al., ICASSP 2023, §2.2).

Same model and predictive as `sngp`; the loss is L = −(1 − p_t)^γ log p_t (eq. 6), which keeps the
entropy of p̂ high and so the probabilities less over-confident. γ = 0 gives back `sngp`.
"""

from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.methods.base import REGISTRY
from rankuq.methods.losses import focal
from rankuq.methods.sngp import SNGP, SNGPParams


class GPFParams(SNGPParams):
    gamma: Annotated[float, Field(ge=0, description="focal-loss focusing parameter γ")] = 2.0


@REGISTRY.register
class GPF(SNGP):
    name = "gpf"
    description = "GPF-BERT: `sngp` trained with focal loss (γ = 2) [Ye et al., ICASSP 2023]"
    Params = GPFParams
    params: GPFParams  # validated as Params by Method.__init__

    def loss(self, model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        return focal(model(**inputs), labels, self.params.gamma)
