"""Post-hoc calibration maps of `bert`'s logit gap z = z_rel − z_non, fitted on the dev lists:
`platt` (Platt 1999: P = σ(a·z + b), scikit-learn's logistic regression) and `isotonic` (Zadrozny &
Elkan 2002: a monotone step function, scikit-learn's isotonic regression). Like `temperature` they
keep `bert`'s model, so its ranking (Platt with a > 0; isotonic up to ties), and change only
calibration; S = 1."""

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pandas as pd
import torch
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.errors import RankuqError
from rankuq.methods.base import REGISTRY, Fitted, PostHocMethod
from rankuq.methods.bert import Bert
from rankuq.methods.calibrators import Calibrator, IsotonicCalibrator, PlattScaler
from rankuq.methods.temperature import dev_logits


class CalibratedBert(Bert, PostHocMethod):
    """`bert`'s model with a calibration map of its logit gap fitted on dev."""

    calibrator: ClassVar[type[Calibrator]]

    def fit(self, model: ModelConfig, checkpoints: Sequence[Path], dev: pd.DataFrame) -> Fitted:
        (member,) = Bert.load_models(self, model, checkpoints)
        logits, labels = dev_logits(member, model, dev)
        gap = (logits[:, 1] - logits[:, 0]).numpy()
        return self.calibrator().fit(gap, labels.numpy()).state()

    def load_models(
        self, model: ModelConfig, checkpoints: Sequence[Path], fitted: Fitted | None = None
    ) -> list[nn.Module]:
        if fitted is None:
            raise RankuqError(
                f"{self.name} scores only once fitted: run its fit stage on the dev lists first"
            )
        self.fitted_map = self.calibrator.from_state(fitted)
        return Bert.load_models(self, model, checkpoints)

    def sample(self, models: Sequence[nn.Module], inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        (model,) = models
        model.eval()
        logits = model(**inputs).logits.float()
        gap = (logits[:, 1] - logits[:, 0]).cpu().numpy()
        return torch.as_tensor(self.fitted_map(gap), dtype=torch.float32)[:, None]


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
