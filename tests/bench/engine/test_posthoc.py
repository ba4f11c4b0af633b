"""A post-hoc method's fit job: fitted on the job's dev lists with the scorer's threads, as the
method fits in process (the same numbers)."""

import pyarrow.parquet as pq
import pytest
import torch

from rankuq import methods, tasks
from rankuq.backbone import TINY, ModelConfig, build_cross_encoder
from rankuq.bench.engine.posthoc import fit_member
from rankuq.bench.planning.jobs import FitJob, ScorerSpec
from rankuq.contract import read_shards

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)


@pytest.fixture(scope="module")
def lists(tmp_path_factory):
    """The first 60 rows of real WikiQA dev and of test, each a shard folder of one part."""
    root = tmp_path_factory.mktemp("lists")
    folders = {}
    for split in ("dev", "test"):
        rows = tasks.get("wikiqa")().load(split, tasks.data_root())
        last = rows["qid"][60].as_py()  # whole queries only: up to the query of row 60
        keep = [i for i, qid in enumerate(rows["qid"].to_pylist()[:60]) if qid != last]
        folders[split] = root / split
        folders[split].mkdir()
        pq.write_table(rows.take(keep), folders[split] / "part-00000.parquet")
    return folders


def test_a_fit_job_fits_on_its_dev_lists_with_the_scorer_s_threads(lists, tmp_path):
    checkpoint = tmp_path / "member"
    model = build_cross_encoder(TINY_MODEL, seed=0)
    methods.create("bert").save_member(model, TINY_MODEL, checkpoint)
    # The scorer's own lists are the tested ones; the job fits on its dev lists.
    scorer = ScorerSpec(
        method="temperature",
        params={},
        model=TINY_MODEL,
        checkpoints=(str(checkpoint),),
        shards=str(lists["test"]),
        threads=1,
    )
    threads = torch.get_num_threads()
    try:
        fitted = fit_member(FitJob(key="k", scorer=scorer, shards=str(lists["dev"])).to_dict())
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    dev = read_shards(lists["dev"]).to_pandas()
    expected = methods.create("temperature").fit(TINY_MODEL, [checkpoint], dev)
    assert fitted == expected and fitted["temperature"] > 0
    tested = read_shards(lists["test"]).to_pandas()
    assert methods.create("temperature").fit(TINY_MODEL, [checkpoint], tested) != fitted
