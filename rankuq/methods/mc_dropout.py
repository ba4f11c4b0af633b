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

    def forward_rows(self, device: torch.device, models: Sequence[nn.Module], max_length: int) -> int:
        """On a GPU the T passes go as one batch (``stacked``) of at most ``GPU_ROWS`` rows."""
        rows = super().forward_rows(device, models, max_length)
        return rows if device.type != "cuda" else max(1, rows // self.params.T)

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        use_fast_dropout(model).train()  # dropout on; no gradients are taken (inference mode)
        if inputs["input_ids"].device.type == "cuda":
            return self.stacked(model, inputs)
        # T passes over the batch, not one over T stacked copies whose activations outgrow the CPU's
        # caches; with the 16-bit masks 10.7-10.9x bert's cost at T = 10, was 19.5x
        # (rankuq/records/2026-11-25-mc-dropout-cost-cpu-in-place.json,
        # rankuq/records/2026-11-21-method-cost-cpu.json).
        return torch.stack(
            [relevance_probability(model(**inputs).logits) for _ in range(self.params.T)], dim=1
        )

    def stacked(self, model: nn.Module, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The T passes as one pass over T copies of the rows (pass-major): a GPU's kernels run full
        where T passes over a few rows each would leave it waiting on launches (limit.json: 10 passes
        stacked cost 9.9x one, looped 12.3x). The masks are drawn in another order than the loop's, so
        the draws differ from the CPU's (they do anyway: CUDA's generator is not the CPU's)."""
        copies = {name: tensor.repeat(self.params.T, 1) for name, tensor in inputs.items()}
        return relevance_probability(model(**copies).logits).view(self.params.T, -1).T
