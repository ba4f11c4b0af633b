"""`temperature`: post-hoc temperature scaling of the `bert` cross-encoder on dev (Guo et al. 2017).

The shared `bert` model (not retrained) gets one scalar T fitted on the dev split,
    T* = argmin_T Σ_dev CE(softmax(z / T), y)   (``methods.calibrators.TemperatureScaler`` on
the relevance logit z₁ − z₀, for which softmax(z / T)[relevant] = σ((z₁ − z₀) / T)),
and scores softmax(z / T*)[relevant], S = 1. T rescales the logits only, so the ranking is `bert`'s
and only calibration changes. The dev lists are read from the shard folder beside the scored one
(same task and list settings, split "dev"); the runner builds it because ``calibration_split`` is set.
"""

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from transformers.modeling_outputs import SequenceClassifierOutput

from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.errors import RankuqError
from rankuq.methods.base import REGISTRY, MethodParams
from rankuq.methods.bert import Bert
from rankuq.methods.calibrators import TemperatureScaler
from rankuq.shards import MANIFEST, read_shards

SETTINGS = ("task", "n", "seed", "variant", "include_nota", "schema")  # a calibration split shares these
BATCH = 64


class TemperatureScaled(nn.Module):
    """A cross-encoder whose logits are divided by a fixed temperature T."""

    def __init__(self, model: nn.Module, temperature: float) -> None:
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, **inputs: torch.Tensor) -> SequenceClassifierOutput:
        return SequenceClassifierOutput(logits=self.model(**inputs).logits / self.temperature)


def _manifest(folder: Path) -> dict:
    try:
        return json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise RankuqError(f"{folder}: unreadable {MANIFEST} ({error}); rebuild with build_shards") from None


def split_shards(shards: Path, split: str) -> Path:
    """The shard folder of ``split`` beside ``shards``, built from the same task and list settings."""
    scored = _manifest(shards)
    if scored.get("split") == split:
        raise RankuqError(f"temperature fits T on {split}; evaluate it on another split than {split}")
    wanted = {key: scored.get(key) for key in SETTINGS}
    found = [
        folder
        for folder in sorted(shards.parent.glob(f"{wanted['task']}-{split}-*"))
        if (folder / MANIFEST).is_file() and all(_manifest(folder).get(k) == v for k, v in wanted.items())
    ]
    if len(found) != 1:
        problem = "none" if not found else f"{len(found)} ({', '.join(f.name for f in found)})"
        raise RankuqError(
            f"temperature needs the {split} shards of {wanted['task']} beside {shards} with the same list "
            f"settings; found {problem}: build exactly one with tasks.shards.build_shards"
            f"({wanted['task']!r}, {split!r}, cache_dir={str(shards.parent)!r})"
        )
    return found[0]


@torch.no_grad()
def split_logits(model: nn.Module, config: ModelConfig, shards: Path) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits [n, 2] and 0/1 labels of every row of a shard folder."""
    tokenizer = load_tokenizer(config)
    table = read_shards(shards).select(["context", "text", "label"]).to_pydict()
    contexts, texts = table["context"], table["text"]
    device = next(model.parameters()).device
    model.eval()
    logits = []
    for start in range(0, len(texts), BATCH):
        stop = start + BATCH
        inputs = encode_pairs(tokenizer, contexts[start:stop], texts[start:stop], config.max_length)
        logits.append(model(**{name: tensor.to(device) for name, tensor in inputs.items()}).logits)
    return torch.cat(logits).float().cpu(), (torch.tensor(table["label"]) > 0).long()


@REGISTRY.register
class Temperature(Bert):
    name = "temperature"
    description = "temperature scaling of `bert` on dev (post-hoc calibration baseline, S = 1)"
    calibration_split = "dev"

    def load_models(
        self, params: MethodParams, model: ModelConfig, checkpoints: Sequence[Path], shards: Path
    ) -> list[nn.Module]:
        (member,) = super().load_models(params, model, checkpoints, shards)
        logits, labels = split_logits(member, model, split_shards(shards, "dev"))
        scaler = TemperatureScaler().fit((logits[:, 1] - logits[:, 0]).numpy(), labels.numpy())
        return [TemperatureScaled(member, scaler.temperature)]
