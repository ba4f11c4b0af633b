"""Token ids computed once per candidate list and kept beside its Arrow shards, tokenised in parallel by
Ray Data CPU workers: a GPU scorer reads them instead of running the tokeniser (one process tokenises
about 6,000 pairs/s, limit.json, against 136,000 pairs/s the H100 scores).

A shard folder's ids live in ``tokens-<key>/`` inside it, one ``part-NNNNN.parquet`` per shard part
with the same rows in the same order (``input_ids`` and, where the tokeniser makes them,
``token_type_ids``: lists of int32, unpadded), and ``tokens.json``, written last: the folder is
complete when it is there. The key hashes the tokeniser itself (its full JSON, vocabulary
included), ``max_length`` and ``TOKENS_VERSION``: another tokeniser or length gets another folder.
Scored from the cache or tokenised in the batch, a row gets the same ids, so the same numbers.
"""

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import ray

from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.contract import shard_files

TOKENS_VERSION = 1  # bump when the ids of a row change (encode_pairs' joining of turns, …)
MANIFEST = "tokens.json"
ID_COLUMNS = ("input_ids", "token_type_ids")
IDS = pa.list_(pa.int32())


@functools.cache
def token_key(model: str) -> str:
    """The cache key of the tokeniser of ``model`` (a ModelConfig's JSON) at its max_length."""
    config = ModelConfig.model_validate_json(model)
    tokenizer = load_tokenizer(config)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    described = backend.to_str() if backend is not None else repr(sorted(tokenizer.get_vocab().items()))
    text = json.dumps([TOKENS_VERSION, config.max_length, type(tokenizer).__name__, described])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def token_folder(shards: Path, model: ModelConfig) -> Path:
    return Path(shards) / f"tokens-{token_key(model.model_dump_json())}"


def _tokenize_part(batch: dict[str, Any], model: str, folder: str) -> dict[str, Any]:
    """Ray Data task: the ids of one shard part (``batch``'s one path), written beside it (temporary
    name, then rename: a reader never sees half a part)."""
    config = ModelConfig.model_validate_json(model)
    (path,) = batch["part"]
    table = pq.read_table(path, columns=["context", "text"])
    contexts = [list(turns) for turns in table.column("context").to_pylist()]
    encoded = encode_pairs(
        load_tokenizer(config), contexts, table.column("text").to_pylist(), config.max_length
    )
    lengths = encoded["attention_mask"].sum(dim=1).tolist()  # right padding (``ensure_token_ids``)
    columns = {
        name: pa.array([row[:n] for row, n in zip(encoded[name].tolist(), lengths, strict=True)], IDS)
        for name in ID_COLUMNS
        if name in encoded
    }
    target = Path(folder) / Path(path).name
    temporary = target.with_suffix(f".tmp{os.getpid()}")
    pq.write_table(pa.table(columns), temporary)
    temporary.replace(target)
    return {"part": [path], "rows": [len(table)]}


def ensure_token_ids(shards: Path, model: ModelConfig, workers: int) -> Path | None:
    """The token-id folder of ``shards`` for ``model``'s tokeniser, tokenised now (one Ray Data task
    per missing part, up to ``workers`` at a time) where it is not complete; None for a tokeniser that
    pads on the left (the scorers cut passes on the right) or lists that cannot be written beside:
    their rows are tokenised in the batch."""
    if load_tokenizer(model).padding_side != "right":
        return None
    folder = token_folder(shards, model)
    if (folder / MANIFEST).is_file():
        return folder
    try:
        folder.mkdir(exist_ok=True)
    except OSError:  # lists on a read-only disk: the scorers tokenise as before
        return None
    missing = [str(p) for p in shard_files(shards) if not (folder / p.name).is_file()]
    if missing:
        parts = ray.data.from_items([{"part": p} for p in missing], override_num_blocks=len(missing))
        parts.map_batches(
            _tokenize_part,  # type: ignore[arg-type]  # Ray's type for fn leaves out the fn_kwargs
            fn_kwargs={"model": model.model_dump_json(), "folder": str(folder)},
            batch_size=1,
            num_cpus=1,
            compute=ray.data.TaskPoolStrategy(size=max(1, min(workers, len(missing)))),
        ).materialize()
    manifest = folder / f"{MANIFEST}.tmp{os.getpid()}"
    manifest.write_text(json.dumps({"parts": len(shard_files(shards)), "version": TOKENS_VERSION}))
    manifest.replace(folder / MANIFEST)
    return folder


@functools.lru_cache(maxsize=2)
def read_token_ids(folder: str, part: str) -> pd.DataFrame:
    """The id columns of the shard part ``part`` (its path) from the token folder ``folder``, kept for
    the next batch, which mostly reads the same part (ids never change in place: keyed folders)."""
    frame: pd.DataFrame = pq.read_table(Path(folder) / Path(part).name).to_pandas()
    return frame
