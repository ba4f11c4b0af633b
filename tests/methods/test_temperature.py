import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder
from rankuq.errors import RankuqError
from rankuq.methods.temperature import split_shards

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)
ROWS = pd.DataFrame(
    {
        "qid": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "context": [["who wrote hamlet"]] * 2 + [["how tall is everest"]] * 2 + [["where is paris"]] * 2,
        "cid": list("abcdef"),
        "text": ["shakespeare wrote it", "paris", "8849 m", "the sea", "in france", "a cat"],
        "label": [1, 0, 1, 0, 1, 0],
    }
)


def write_shards(cache, split: str, key: str, n: int | None = None):
    """A shard folder as tasks.shards writes it: part files and the manifest of its settings."""
    folder = cache / f"wikiqa-{split}-{key}"
    folder.mkdir(parents=True)
    table = ROWS.assign(task="wikiqa", split=split, ns="native", nota=False)
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), folder / "part-00000.parquet")
    settings = {
        "task": "wikiqa",
        "split": split,
        "strategy": "native",
        "n": n,
        "seed": 0,
        "variant": "standard",
        "include_nota": True,
        "rows_per_shard": 2048,
        "schema": "contract1-v2",
    }
    (folder / "manifest.json").write_text(json.dumps(settings))
    return folder


def test_the_dev_shards_beside_the_scored_ones_are_found(tmp_path):
    test = write_shards(tmp_path, "test", "aaa")
    dev = write_shards(tmp_path, "dev", "bbb")
    write_shards(tmp_path, "dev", "ccc", n=5)  # other list settings: not a match
    assert split_shards(test, "dev") == dev


def test_missing_dev_shards_are_a_clear_error(tmp_path):
    test = write_shards(tmp_path, "test", "aaa")
    with pytest.raises(RankuqError, match=r"temperature needs the dev shards of wikiqa .* found none"):
        split_shards(test, "dev")


def test_fitting_on_the_evaluated_split_is_refused(tmp_path):
    dev = write_shards(tmp_path, "dev", "bbb")
    with pytest.raises(RankuqError, match="evaluate it on another split than dev"):
        split_shards(dev, "dev")


def test_scores_rescale_bert_and_keep_its_ranking(tmp_path):
    test = write_shards(tmp_path, "test", "aaa")
    write_shards(tmp_path, "dev", "bbb")
    checkpoint = tmp_path / "model.pt"
    model = build_cross_encoder(TINY_MODEL, seed=0)
    with torch.no_grad():
        model.classifier.weight.mul_(300)  # an over-confident cross-encoder: T > 1 on dev
    torch.save(model.state_dict(), checkpoint)
    scores = {}
    for name in ("bert", "temperature"):
        method = methods.get(name)()
        score = method.make_scorer(method.parse({}, "test"), TINY_MODEL, [checkpoint], test)
        scores[name] = score(ROWS)
    assert scores["temperature"].shape == (6, 1)
    assert not np.allclose(scores["temperature"], scores["bert"])
    assert (np.argsort(scores["temperature"][:, 0]) == np.argsort(scores["bert"][:, 0])).all()
    assert methods.get("temperature").calibration_split == "dev"
    assert methods.get("temperature")().training_identity(None) is None  # shares bert's model
