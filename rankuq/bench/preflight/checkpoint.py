"""What a checkpoint folder's files say, read without loading its weights: whether the weights are
whole (a safetensors header that covers its file, a ``.bin``'s zip directory), whether its
architecture is one rankuq can fine-tune or score as given, and the longest input it was saved for.
A broken folder fails here in seconds, not in a Ray trial after minutes."""

import json
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from rankuq.errors import RankuqError

if TYPE_CHECKING:  # transformers and torch: check_backbone imports them only once the files are there
    from transformers import PretrainedConfig

    from rankuq.backbone import ModelConfig

SHORTEST, LONGEST = 8, 512  # ModelConfig.max_length's bounds
# transformers' model_max_length where a tokenizer records none (VERY_LARGE_INTEGER): no length.
UNSET_LENGTH = 1_000_000


def check_weights(files: list[Path], where: str) -> None:
    """Each weights file is whole: a safetensors header that parses and covers its file (a garbage or
    truncated file fails here), a PyTorch ``.bin``'s zip directory at its end."""
    from safetensors import SafetensorError, safe_open

    for path in files:
        if path.suffix == ".safetensors":
            try:
                with safe_open(str(path), framework="numpy") as weights:
                    weights.keys()
            except (SafetensorError, OSError) as error:
                raise RankuqError(
                    f"{where}: {path} is no whole safetensors file ({error}); copy the checkpoint's "
                    "weights again (a partial download or copy leaves such a file)"
                ) from None
        elif not zipfile.is_zipfile(path):
            raise RankuqError(
                f"{where}: {path} is no whole PyTorch weights file (no zip directory at its end); copy "
                "the checkpoint's weights again, or save them with save_pretrained"
            )


def check_architecture(
    hf_config: "PretrainedConfig", model: "ModelConfig", given_head: bool, where: str
) -> None:
    """The config is one ``build_cross_encoder`` can build: a sequence classifier transformers knows,
    with the dropout settings rankuq sets (an encoder: a GPT-2 config has none); scored as given
    (``given_head``, train.epochs 0), a trained sequence-classification head of 1 or 2 labels."""
    from transformers import AutoModelForSequenceClassification

    from rankuq.backbone import configured

    name = type(hf_config).__name__
    if type(hf_config) not in AutoModelForSequenceClassification._model_mapping:
        raise RankuqError(
            f"{where}: its {name} has no sequence-classification model in transformers; use a checkpoint "
            "of an encoder architecture (BERT, RoBERTa, ELECTRA, DeBERTa, …)"
        )
    configured(hf_config, model, where)
    if given_head:
        check_head(hf_config.architectures or [], hf_config.num_labels, where)


def check_saved_head(folder: Path, where: str) -> None:
    """``check_head`` from the folder's config.json as written, before transformers is imported
    (seconds on a loaded machine): a bi-encoder or a 3-label classifier is refused at once."""
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return  # check_backbone's loading says what is wrong with it
    if not isinstance(config, dict):
        return
    labels = config.get("id2label")
    count = len(labels) if isinstance(labels, dict) else config.get("num_labels", 2)  # transformers' 2
    architectures = config.get("architectures")
    check_head(architectures if isinstance(architectures, list) else [], count, where)


def check_head(architectures: list[str], labels: int | None, where: str) -> None:
    """A checkpoint scored as given (train.epochs 0) holds a trained sequence-classification head of
    1 or 2 labels."""
    heads = [arch for arch in architectures if arch.endswith("ForSequenceClassification")]
    if not heads:
        saved = ", ".join(architectures or ["none named"])
        raise RankuqError(
            f"{where}: saved as {saved}, without a sequence-classification head, so there is no relevance "
            "score to use as given (train.epochs: 0); give a cross-encoder checkpoint, or fine-tune this "
            "one (rankuq run --backbone)"
        )
    if labels not in (1, 2):
        raise RankuqError(
            f"{where}: a {labels}-label classifier ({heads[0]}), not a relevance head of 1 "
            "or 2 labels, so it cannot be scored as given (train.epochs: 0); fine-tune it instead "
            "(rankuq run --backbone), which gives it a new 2-way head"
        )


def own_max_length(folder: Path) -> tuple[int, str]:
    """The longest input the checkpoint was saved for, and the file and key that say so:
    sentence-transformers' ``max_seq_length``, else the tokenizer's ``model_max_length`` (where a
    member rankuq saved records the length it was trained at), else the config's
    ``max_position_embeddings``; never above the position embeddings or rankuq's 512."""
    recorded = [
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
        ("config.json", "max_position_embeddings"),
    ]
    found = [(value, f"{file}'s {key}") for file, key in recorded if (value := _length(folder / file, key))]
    if not found:
        return LONGEST, f"rankuq's longest, as {folder} records no length"
    length, source = found[0]
    positions = _length(folder / "config.json", "max_position_embeddings")
    if positions is not None and positions < length:
        length, source = positions, f"config.json's max_position_embeddings, below {source} {length}"
    if length > LONGEST:
        return LONGEST, f"rankuq's longest; {source} is {length}"
    return length, source


def _length(path: Path, key: str) -> int | None:
    """A positive length at ``key`` of a JSON file, or None (no file, no key, or transformers'
    stand-in for 'no length')."""
    try:
        value: object = json.loads(path.read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and 0 < value < UNSET_LENGTH else None
