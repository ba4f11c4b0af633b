"""`mc_dropout`: dropout kept on at test time, T stochastic passes (S-BERT^D, Penha & Hauff, 2021, §3.2.2)."""

from collections.abc import Sequence
from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.methods.base import REGISTRY, MethodParams, NeuralMethod, relevance_probability
from rankuq.methods.dropout import MASKS, use_fast_dropout


class MCDropoutParams(MethodParams):
    T: Annotated[int, Field(gt=0, le=1000, description="stochastic forward passes")] = 10


@REGISTRY.register
class MCDropout(NeuralMethod):
    name = "mc_dropout"
    description = "MC Dropout: dropout on at test time, T stochastic passes (T = 10) [Penha & Hauff, 2021]"
    Params = MCDropoutParams
    params: MCDropoutParams  # validated as Params by Method.__init__
    draws = MASKS

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        use_fast_dropout(model).train()  # dropout on; no gradients are taken (inference mode)
        # T passes over the batch, not one over T stacked copies whose activations outgrow the CPU's
        # caches; with the 16-bit masks 10.7-10.9x bert's cost at T = 10, was 19.5x (docs/benchmarks.md).
        return torch.stack(
            [relevance_probability(model(**inputs).logits) for _ in range(self.params.T)], dim=1
        )
