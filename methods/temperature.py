"""`temperature`: post-hoc temperature scaling of the `bert` cross-encoder on dev (Guo et al. 2017).

The shared `bert` model (not retrained) gets one scalar T fitted on the dev lists,
    T* = argmin_T Σ_dev CE(softmax(z / T), y)   (L-BFGS over log T),
and scores softmax(z / T*)[relevant], S = 1. T rescales the logits only, so the ranking is `bert`'s
and only calibration changes. The grid's fit stage calls ``fit`` with the dev lists and caches T.
"""

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import torch
from torch import nn
from torch.nn import functional
from transformers.modeling_outputs import SequenceClassifierOutput

from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.errors import RankuqError
from rankuq.methods.base import REGISTRY, Fitted, PostHocMethod
from rankuq.methods.bert import Bert

BATCH = 64


class TemperatureScaled(nn.Module):
    """A cross-encoder whose logits are divided by a fixed temperature T."""

    def __init__(self, model: nn.Module, temperature: float) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, **inputs: torch.Tensor) -> SequenceClassifierOutput:
        return SequenceClassifierOutput(logits=self.model(**inputs).logits / self.temperature)


def fit_temperature(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """T* minimising the cross-entropy of softmax(logits / T) against ``labels``."""
    log_t = torch.zeros((), requires_grad=True)
    optimizer = torch.optim.LBFGS([log_t], lr=0.1, max_iter=200, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = functional.cross_entropy(logits / log_t.exp(), labels)
        loss.backward()
        return loss

    optimizer.step(closure)
    return float(log_t.detach().exp())


@torch.no_grad()
def dev_logits(
    model: nn.Module, config: ModelConfig, rows: pd.DataFrame
) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits [n, 2] and 0/1 labels of candidate rows (contract-1 columns)."""
    tokenizer = load_tokenizer(config)
    contexts, texts = [list(turns) for turns in rows["context"]], rows["text"].tolist()
    device = next(model.parameters()).device
    model.eval()
    logits = []
    for start in range(0, len(texts), BATCH):
        stop = start + BATCH
        inputs = encode_pairs(tokenizer, contexts[start:stop], texts[start:stop], config.max_length)
        logits.append(model(**{name: tensor.to(device) for name, tensor in inputs.items()}).logits)
    return torch.cat(logits).float().cpu(), torch.tensor((rows["label"] > 0).to_numpy()).long()


@REGISTRY.register
class Temperature(Bert, PostHocMethod):
    name = "temperature"
    description = "temperature scaling of `bert` on dev (post-hoc calibration baseline, S = 1)"

    def fit(self, model: ModelConfig, checkpoints: Sequence[Path], dev: pd.DataFrame) -> Fitted:
        (member,) = super().load_models(model, checkpoints)
        return {"temperature": fit_temperature(*dev_logits(member, model, dev))}

    def load_models(
        self, model: ModelConfig, checkpoints: Sequence[Path], fitted: Fitted | None = None
    ) -> list[nn.Module]:
        if fitted is None:
            raise RankuqError("temperature scores only once fitted: run its fit stage on the dev lists first")
        (member,) = super().load_models(model, checkpoints)
        return [TemperatureScaled(member, fitted["temperature"])]
