"""``model.backbone``, checked before Ray starts: a checkpoint folder that cannot load, or a hub name
with neither the hub nor a cache, is one RankuqError of one line that names it and what to do."""

import json
import shutil
import socket
from pathlib import Path

import pytest

from rankuq.backbone import TINY, ModelConfig
from rankuq.bench.preflight.backbone_folder import TINY_NAME, check_backbone
from rankuq.errors import RankuqError


def _no_weights(folder: Path) -> str:
    (folder / "model.safetensors").unlink()
    return r"has a config.json but no weights \(model.safetensors, model.safetensors.index.json"


def _lost_shard(folder: Path) -> str:
    (folder / "model.safetensors").rename(folder / "model-00001-of-00002.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return r"lacks 1 of the 2 weight shards its model.safetensors.index.json names \(e.g. model-00002-of"


def _no_tokenizer(folder: Path) -> str:
    (folder / "tokenizer.json").unlink()  # the one tokenizer file save_pretrained writes
    return r"has no tokenizer \(tokenizer.json, vocab.txt"


def _bad_config(folder: Path) -> str:
    (folder / "config.json").write_text('{"model_type": "no-such-architecture"}')
    return r"its config does not load \(.*no-such-architecture"


@pytest.mark.parametrize("breaks", [_no_weights, _lost_shard, _no_tokenizer, _bad_config])
def test_a_backbone_folder_that_cannot_load_is_one_line_naming_it(cross_encoder, tmp_path, breaks):
    folder = shutil.copytree(cross_encoder, tmp_path / "checkpoint")
    match = breaks(folder)
    with pytest.raises(RankuqError, match=rf"model.backbone {folder}: .*{match}") as error:
        check_backbone(ModelConfig(backbone=str(folder)))
    assert "\n" not in str(error.value)


def test_a_hub_name_without_the_hub_or_a_cache_is_refused_at_once(tmp_path, monkeypatch):
    with socket.socket() as probe:  # a port nobody listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(
        RankuqError, match=r"model.backbone org/model: no such folder, and 127.0.0.1 cannot be"
    ):
        check_backbone(ModelConfig(backbone="org/model"))


def test_a_loadable_checkpoint_and_the_shipped_minilm_pass(cross_encoder):
    check_backbone(ModelConfig(backbone=str(cross_encoder)))
    check_backbone(ModelConfig())
    assert TINY_NAME == TINY  # the name backbone_folder knows without importing torch
