"""`bm25`: a lexical ranker over the scored lists' texts, scores that are not probabilities."""

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rankuq import methods


def test_bm25_ranks_the_overlapping_candidate_first(tmp_path, tiny_model, batch):
    pq.write_table(pa.Table.from_pandas(batch[["text"]]), tmp_path / "part-00000.parquet")
    method = methods.create("bm25")
    score = method.make_scorer(tiny_model, [], tmp_path)
    scores = score(batch)
    assert scores.shape == (3, 1)
    assert scores[0, 0] > scores[1, 0]
    assert not method.probabilistic and not method.trains
    assert np.isfinite(scores).all()


def test_rankuq_run_does_not_import_bm25s():
    """bm25s imports JAX where it is installed and starts its backend (threads, "os.fork() was called"
    warnings in every Ray worker): `rankuq run`'s imports, and registering every method, must not reach
    it; only a bm25 scorer imports it. A fresh interpreter: this one may have imported it already."""
    code = (
        "import sys\n"
        "import rankuq.bench.cli.main, rankuq.bench.run.stages\n"
        "from rankuq import methods\n"
        "[methods.create(name) for name in methods.REGISTRY.names()]\n"
        "print(sorted({'bm25s', 'jax'} & set(sys.modules)))\n"
    )
    run = [sys.executable, "-c", code]
    found = subprocess.run(run, check=True, capture_output=True, text=True, timeout=300)
    assert found.stdout.strip() == "[]"
