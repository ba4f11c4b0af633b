"""How far the dense strategy's bfloat16 encoder moves its neighbours from the fp32 encoder's.

For each split named, both encoders embed the split's candidates and queries; a faiss inner-product
index gives every query its top ``k`` candidates under each, and the overlap of the two lists at
1, 10 and ``k`` is averaged over the queries. bfloat16 is ``tasks.embeddings.encode``; fp32 is
sentence-transformers' own encode of the same offline MiniLM (the encoder before bfloat16).

    python -m rankuq.bench.benchmarks.dense_precision [--data-dir DIR] [--k 20] [task/split ...]
"""

import argparse
from collections.abc import Callable

import faiss
import numpy as np

from rankuq import tasks
from rankuq.backbone import offline_minilm
from rankuq.tasks.embeddings import encode
from rankuq.tasks.negatives import query_texts
from rankuq.tasks.pool import Pool

SPLITS = ("wikiqa/dev", "wikiqa/test", "clariq/test")
Encoder = Callable[[list[str]], np.ndarray]  # texts → unit vectors


def neighbours(embed: Encoder, pool: Pool, k: int) -> np.ndarray:
    """[queries, k] corpus rows, nearest first."""
    corpus = embed(pool.texts)
    index = faiss.IndexFlatIP(corpus.shape[1])
    index.add(corpus)
    return index.search(embed(query_texts(pool, np.arange(len(pool.qids)))), k)[1]


def overlap(ours: np.ndarray, theirs: np.ndarray, at: int) -> float:
    """Mean share of the top ``at`` rows two rankings have in common."""
    return float(np.mean([len(set(a[:at]) & set(b[:at])) / at for a, b in zip(ours, theirs, strict=True)]))


def fp32_encoder() -> Encoder:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(offline_minilm()), device="cpu")
    return lambda texts: model.encode(texts, batch_size=128, normalize_embeddings=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("splits", nargs="*", default=SPLITS, help="task/split (default: %(default)s)")
    parser.add_argument("--data-dir", help="shared data folder (default: $RANKUQ_DATA or ../shared/data)")
    parser.add_argument("--k", type=int, default=20)
    args = parser.parse_args()
    root = tasks.data_root(args.data_dir)
    reference = fp32_encoder()
    for name in args.splits:
        task, split = name.split("/")
        pool = tasks.get(task)().pool(split, root)
        ours, theirs = neighbours(encode, pool, args.k), neighbours(reference, pool, args.k)
        shares = ", ".join(f"@{at} {overlap(ours, theirs, at):.3f}" for at in (1, 10, args.k))
        print(f"{name}: {len(pool.qids)} queries, {len(pool.texts)} candidates; overlap {shares}")


if __name__ == "__main__":
    main()
