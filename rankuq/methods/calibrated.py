"""Post-hoc calibration of `bert`: one map of its relevance logit z = z₁ − z₀ fitted on the dev
lists in the grid's fit stage (``methods.calibrators``): `temperature` (Guo et al. 2017: σ(z / T),
T minimising the dev cross-entropy, i.e. softmax(logits / T)[relevant]), `platt` (Platt 1999:
σ(a·z + b), scikit-learn's logistic regression) and `isotonic` (Zadrozny & Elkan 2002: a monotone
step function, scikit-learn's isotonic regression). They keep `bert`'s model (not retrained), so
its ranking (Platt with a > 0; isotonic up to ties), and change only calibration; S = 1."""

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import torch
from torch import nn

from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.errors import RankuqError
from rankuq.methods.base import REGISTRY, Fitted, PostHocMethod
from rankuq.methods.bert import Bert
from rankuq.methods.calibrators import Calibrator, IsotonicCalibrator, PlattScaler, TemperatureScaler

BATCH = 64  # dev rows per forward pass of the fit


@torch.no_grad()
def relevance_logits(model: nn.Module, config: ModelConfig, rows: pd.DataFrame) -> np.ndarray:
    """The relevance logit z₁ − z₀ of every candidate row (contract-1 columns)."""
    tokenizer = load_tokenizer(config)
    contexts, texts = [list(turns) for turns in rows["context"]], rows["text"].tolist()
    device = next(model.parameters()).device
    model.eval()
    logits = []
    for start in range(0, len(texts), BATCH):
        stop = start + BATCH
        inputs = encode_pairs(tokenizer, contexts[start:stop], texts[start:stop], config.max_length)
        logits.append(model(**{name: tensor.to(device) for name, tensor in inputs.items()}).logits.float())
    both = torch.cat(logits).cpu()
    return (both[:, 1] - both[:, 0]).numpy()


class MappedGap(nn.Module):
    """`bert`'s model with the calibration map of its logit gap fitted on dev: what the scorer's
    closure holds, so the method itself keeps no state between scorers."""

    def __init__(self, member: nn.Module, calibrate: Calibrator) -> None:
        super().__init__()
        self.member = member
        self.calibrate = calibrate


class CalibratedBert(Bert, PostHocMethod):
    """`bert`'s model with a calibration map of its logit gap fitted on dev."""

    calibrator: ClassVar[type[Calibrator]]

    def fit(self, model: ModelConfig, checkpoints: Sequence[Path], dev: pd.DataFrame) -> Fitted:
        (member,) = Bert.load_models(self, model, checkpoints)
        labels = (dev["label"] > 0).to_numpy()
        return self.calibrator().fit(relevance_logits(member, model, dev), labels).state()

    def load_models(
        self, model: ModelConfig, checkpoints: Sequence[Path], fitted: Fitted | None = None
    ) -> list[nn.Module]:
        if fitted is None:
            raise RankuqError(
                f"{self.name} scores only once fitted: run its fit stage on the dev lists first"
            )
        (member,) = Bert.load_models(self, model, checkpoints)
        return [MappedGap(member, self.calibrator.from_state(fitted))]

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (mapped,) = models
        assert isinstance(mapped, MappedGap)
        mapped.eval()
        logits = mapped.member(**inputs).logits.float()
        gap = (logits[:, 1] - logits[:, 0]).cpu().numpy()
        return torch.as_tensor(mapped.calibrate(gap), dtype=torch.float32)[:, None]


@REGISTRY.register
class Temperature(CalibratedBert):
    name = "temperature"
    description = "temperature scaling of `bert` on dev: σ(z / T) (Guo et al. 2017), S = 1"
    calibrator = TemperatureScaler


@REGISTRY.register
class Platt(CalibratedBert):
    name = "platt"
    description = "Platt scaling of `bert` on dev: σ(a·z + b) of its logit gap (Platt 1999), S = 1"
    calibrator = PlattScaler


@REGISTRY.register
class Isotonic(CalibratedBert):
    name = "isotonic"
    description = "isotonic regression of `bert`'s logit gap on dev (Zadrozny & Elkan 2002), S = 1"
    calibrator = IsotonicCalibrator
