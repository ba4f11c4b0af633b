"""`mc_dropout`: dropout kept on at test time, T stochastic passes (S-BERT^D, Penha & Hauff, 2021, §3.2.2)."""

from collections.abc import Sequence
from typing import Annotated

import torch
from pydantic import Field
from torch import nn

from rankuq.methods.base import REGISTRY, MethodParams, NeuralMethod, relevance_probability


class MCDropoutParams(MethodParams):
    T: Annotated[int, Field(gt=0, le=1000, description="stochastic forward passes")] = 10


@REGISTRY.register
class MCDropout(NeuralMethod):
    name = "mc_dropout"
    description = "MC Dropout: dropout on at test time, T stochastic passes (T = 10) [Penha & Hauff, 2021]"
    Params = MCDropoutParams

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        model.train()  # dropout on; no gradients are taken (inference mode)
        passes = self.params.T
        n = next(iter(inputs.values())).shape[0]
        # One forward over the batch repeated T times, not T loops over the data.
        repeated = {key: value.repeat(passes, 1) for key, value in inputs.items()}
        probabilities = relevance_probability(model(**repeated).logits)
        return probabilities.view(passes, n).T
