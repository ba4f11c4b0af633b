"""Epoch checkpoints of a member trained in its Tune trial: the member's folder, the rest of the
training state beside it, the best epoch's weights inside; found again in epoch order."""

import pytest
import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig
from rankuq.bench.engine.checkpoints import (
    BEST_FOLDER,
    STATE_FILE,
    epoch_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from rankuq.methods.base import WEIGHTS_FILE

CONFIG = ModelConfig(backbone=TINY, max_length=32)


@pytest.fixture(scope="module")
def member():
    method = methods.create("bert")
    return method, method.build_model(CONFIG, seed=0)


def _same(left: dict[str, torch.Tensor], right: dict[str, torch.Tensor]) -> bool:
    return left.keys() == right.keys() and all(torch.equal(left[name], right[name]) for name in left)


def test_a_checkpoint_holds_the_state_and_the_best_weights_and_reads_back(member, tmp_path):
    method, model = member
    weights = {name: value.clone() for name, value in model.state_dict().items()}
    best = {name: value + 1 for name, value in weights.items()}  # an earlier epoch's weights
    state = {"model": weights, "epoch": 3, "losses": [0.69, 0.52, 0.48], "best_epoch": 2}
    folder = tmp_path / "epoch-3"
    save_checkpoint(folder, state, method, model, CONFIG, best=best)
    assert (folder / WEIGHTS_FILE).is_file() and (folder / BEST_FOLDER / WEIGHTS_FILE).is_file()
    assert set(torch.load(folder / STATE_FILE, weights_only=True)) == {"epoch", "losses", "best_epoch"}
    assert _same(model.state_dict(), weights)  # the model was lent for the best save, then restored
    loaded = load_checkpoint(folder, method, model)
    assert (loaded["epoch"], loaded["losses"], loaded["best_epoch"]) == (3, [0.69, 0.52, 0.48], 2)
    assert _same(loaded["model"], weights) and _same(loaded["best"], best)


def test_without_early_stopping_there_is_no_best_folder(member, tmp_path):
    method, model = member
    save_checkpoint(tmp_path / "epoch-1", {"model": model.state_dict(), "epoch": 1}, method, model, CONFIG)
    assert not (tmp_path / "epoch-1" / BEST_FOLDER).exists()
    assert "best" not in load_checkpoint(tmp_path / "epoch-1", method, model)


def test_epoch_checkpoints_are_found_in_epoch_order_not_name_order(tmp_path):
    for epoch in (10, 2, 1):
        (tmp_path / f"epoch-{epoch}").mkdir()
    assert [path.name for path in epoch_checkpoints(tmp_path)] == ["epoch-1", "epoch-2", "epoch-10"]
    assert epoch_checkpoints(tmp_path / "never-trained") == []
