"""``model.backbone``, checked before Ray starts (a trial would fail on it after a minute) and, for
its files, without torch or transformers: a checkpoint folder holds its config.json, weights (or
the shards its index names) and tokenizer; a hub name's hub answers, or its files are cached."""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from rankuq.bench.preflight import addresses  # CONNECT_TIMEOUT_S read when dialling: one for every probe
from rankuq.bench.preflight.checkpoint import check_architecture, check_weights
from rankuq.errors import RankuqError

if TYPE_CHECKING:  # rankuq.backbone imports torch (seconds): the grid's loading has it by then
    from rankuq.backbone import ModelConfig

# What a checkpoint folder holds: its weights (whole, or an index of shards) and its tokenizer.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model")
HUB = "huggingface.co"
T = TypeVar("T")
TINY_NAME = "tiny"  # rankuq.backbone.TINY, which is not imported here: that module imports torch


def locate_backbone(backbone: str | None) -> tuple[str, bool] | None:
    """Where ``model.backbone``'s files are, checked without torch or transformers (so before the
    grid's imports): a folder's config.json, weights (or the shards its index names) and tokenizer;
    a hub name's hub answering, or its files cached. Returns (folder or hub name, whether only the
    hub cache has it); None for the shipped MiniLM (the default, and ``tiny``'s tokenizer)."""
    if backbone in (None, TINY_NAME):
        return None
    where = f"model.backbone {backbone}"
    folder = Path(backbone).expanduser()
    if folder.exists():
        _check_folder(folder, where)
        return str(folder), False
    if backbone.startswith(("/", ".", "~")) or backbone.count("/") > 1:  # a path, not a hub name
        raise RankuqError(
            f"{where}: no such folder; give a checkpoint folder (config.json, weights, tokenizer)"
        )
    return backbone, _hub_offline(backbone, where)


def check_backbone(config: "ModelConfig", given_head: bool = False) -> None:
    """``model.backbone`` loads, checked before Ray starts (a trial would fail on it after a minute):
    its files (``locate_backbone``: weights whole), then its config and tokenizer as transformers
    loads them, and its architecture (``check_architecture``; ``given_head``: scored as given,
    train.epochs 0)."""
    located = locate_backbone(config.backbone)
    if located is None:
        return
    source, offline = located
    from transformers import AutoConfig, AutoTokenizer

    where = f"model.backbone {config.backbone}"
    hf_config = _loaded("config", AutoConfig.from_pretrained, source, offline, where)
    _loaded("tokenizer", AutoTokenizer.from_pretrained, source, offline, where)
    check_architecture(hf_config, config, given_head, where)


def _loaded(what: str, load: Callable[..., T], source: str, offline: bool, where: str) -> T:
    """``load(source)``, its failure one line naming ``what`` of the backbone did not load."""
    try:
        return load(source, local_files_only=offline)
    except (OSError, ValueError, KeyError) as error:
        reason = " ".join(str(error).split())[:200]
        raise RankuqError(f"{where}: its {what} does not load ({reason})") from None


def _check_folder(folder: Path, where: str) -> None:
    """The files a checkpoint folder needs are there (and a weights index's shards)."""
    if not folder.is_dir():
        raise RankuqError(f"{where}: a file, not a checkpoint folder (config.json, weights, tokenizer)")
    if not (folder / "config.json").is_file():
        raise RankuqError(f"{where}: {folder} has no config.json; give a save_pretrained folder")
    names = [name for weights in WEIGHT_FILES for name in (weights, f"{weights}.index.json")]
    found = [name for name in names if (folder / name).is_file()]
    if not found:
        raise RankuqError(
            f"{where}: {folder} has a config.json but no weights ({', '.join(names)}); save the model "
            "with save_pretrained, or give the folder that holds its weights"
        )
    if found[0].endswith(".index.json"):
        try:
            shards = sorted(set(json.loads((folder / found[0]).read_text())["weight_map"].values()))
        except (ValueError, KeyError, AttributeError) as error:
            raise RankuqError(f"{where}: {folder / found[0]} is no weights index ({error})") from None
        missing = [shard for shard in shards if not (folder / shard).is_file()]
        if missing:
            raise RankuqError(
                f"{where}: {folder} lacks {len(missing)} of the {len(shards)} weight shards its "
                f"{found[0]} names (e.g. {missing[0]}); copy the whole checkpoint folder"
            )
        check_weights([folder / shard for shard in shards], where)
    else:
        check_weights([folder / found[0]], where)
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise RankuqError(
            f"{where}: {folder} has no tokenizer ({', '.join(TOKENIZER_FILES)}); save it beside the "
            "model (tokenizer.save_pretrained(folder))"
        )


def _hub_offline(name: str, where: str) -> bool:
    """True where the hub does not answer but ``name``'s files are cached; refused where neither."""
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT", f"https://{HUB}"))
    host = endpoint.hostname or HUB
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() not in ("1", "true"):
        try:
            addresses.check_endpoint(host, endpoint.port or 443, where)
            return False
        except RankuqError:
            pass
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return True
    raise RankuqError(
        f"{where}: no such folder, and {host} cannot be reached to download it as a hub model (nor is "
        "it cached); give a local checkpoint folder, or run where the hub answers"
    )
