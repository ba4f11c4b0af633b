"""Token ids cached beside the shards: tokenised once per list by Ray Data tasks, read by the scorers
in place of the tokeniser, with the same tensors and so the same predictions."""

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from rankuq import methods, tasks
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.bench.engine.scoring import score_shards
from rankuq.bench.engine.tokens import MANIFEST, ensure_token_ids, read_token_ids, token_folder
from rankuq.bench.planning.jobs import ScorerSpec
from rankuq.contract import shard_files
from rankuq.methods.base import padded_inputs
from rankuq.tasks.shards import build_shards

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """WikiQA dev in shards of 400 rows."""
    cache = tmp_path_factory.mktemp("shards")
    return build_shards("wikiqa", "dev", root=tasks.data_root(), cache_dir=cache, rows_per_shard=400)


def test_cached_ids_pad_to_the_tokeniser_s_own_tensors(ray_session, shards):
    folder = ensure_token_ids(shards, TINY_MODEL, workers=2)
    assert folder == token_folder(shards, TINY_MODEL) and (folder / MANIFEST).is_file()
    assert sorted(p.name for p in folder.glob("part-*")) == [p.name for p in shard_files(shards)]
    assert token_folder(shards, TINY_MODEL.model_copy(update={"max_length": 64})) != folder  # its own key
    part = shard_files(shards)[1]
    rows = pq.read_table(part).to_pandas()  # parts hold whole queries: about 400 rows each
    cached = read_token_ids(str(folder), str(part)).iloc[13:93].reset_index(drop=True)
    tokenizer = load_tokenizer(TINY_MODEL)
    contexts = [list(turns) for turns in rows["context"][13:93]]
    expected = encode_pairs(tokenizer, contexts, rows["text"][13:93].tolist(), TINY_MODEL.max_length)
    got = padded_inputs(cached, tokenizer.pad_token_id)
    assert got.keys() == expected.keys()
    assert all(torch.equal(got[name], expected[name]) for name in expected)


@pytest.mark.parametrize("method", ["bert", "mc_dropout"])
def test_scoring_from_cached_ids_gives_the_same_predictions(ray_session, shards, tmp_path, method):
    """The same ids, the same numbers: bitwise, the dropout draws included (same batches, same seeds)."""
    member = tmp_path / "member"
    methods.create("bert").save_member(build_cross_encoder(TINY_MODEL, 0), TINY_MODEL, member)
    spec = ScorerSpec(
        method=method,
        params={},
        model=TINY_MODEL,
        checkpoints=(str(member),),
        shards=str(shards),
        threads=1,
        precision="fp32",
    )
    tokenised = score_shards(spec, 256, tokens=False)
    cached = score_shards(spec, 256, tokens=True)
    assert cached.equals(tokenised)
    assert np.ptp(cached["prob_mean"].to_numpy()) > 0
