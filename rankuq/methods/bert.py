"""`bert`: the deterministic cross-encoder, [CLS] → FFN → softmax over {non-rel, rel}.

Penha & Hauff, 2021.
"""

from collections.abc import Sequence

import torch
from torch import nn

from rankuq.methods.base import REGISTRY, NeuralMethod, relevance_probability


@REGISTRY.register
class Bert(NeuralMethod):
    name = "bert"
    description = "deterministic cross-encoder, pointwise cross-entropy (S = 1) [Penha & Hauff, 2021]"

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        model.eval()
        return relevance_probability(model(**inputs).logits)[:, None]
