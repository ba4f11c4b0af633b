"""Epoch checkpoints of a member trained in its Tune trial: the model folder plus the training state."""

from pathlib import Path

import torch
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.bench.engine.training_loop import TrainState
from rankuq.methods.base import NeuralMethod

EPOCH_PREFIX = "epoch-"  # a member trained in its Tune trial: its epoch checkpoints, epoch-1, epoch-2, …
STATE_FILE = "train-state.pt"  # the rest of an epoch checkpoint: optimizer, schedule, epoch, losses, RNGs
BEST_FOLDER = "best"  # with early stopping: the best dev epoch's member, inside each epoch checkpoint


def save_checkpoint(
    folder: Path,
    state: TrainState,
    method: NeuralMethod,
    model: nn.Module,
    config: ModelConfig,
    best: dict[str, torch.Tensor] | None = None,
) -> None:
    """An epoch checkpoint: the member's folder as scoring loads it (``model`` holds the state's
    weights), the rest of the state beside it and, with early stopping, the ``best`` weights so far
    as a member of their own in BEST_FOLDER."""
    method.save_member(model, config, folder)
    torch.save({name: value for name, value in state.items() if name != "model"}, folder / STATE_FILE)
    if best is not None:
        model.load_state_dict(best)  # lent for the save, then the state's weights again
        method.save_member(model, config, folder / BEST_FOLDER)
        model.load_state_dict(state["model"])


def load_checkpoint(folder: Path, method: NeuralMethod, model: nn.Module) -> TrainState:
    """The training state an epoch checkpoint in ``folder`` holds (``save_checkpoint``'s)."""
    state: TrainState = torch.load(folder / STATE_FILE, weights_only=True)
    state["model"] = method.member_state(model, folder)
    if (folder / BEST_FOLDER).is_dir():
        state["best"] = method.member_state(model, folder / BEST_FOLDER)
    return state


def epoch_checkpoints(folder: Path) -> list[Path]:
    """The complete epoch checkpoints of a member trained in its trial, the latest last."""
    found = folder.glob(f"{EPOCH_PREFIX}*") if folder.is_dir() else []
    return sorted(found, key=lambda path: int(path.name.removeprefix(EPOCH_PREFIX)))
