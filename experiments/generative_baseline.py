"""Can paper 001's generative baseline G rank at rankuq's scale? (Cohen et al. 2021, §4.4 and Table 5.)

G, as the paper builds it (after Liu & Lapata 2019): the candidate encoded by a small BERT (here
MiniLM cut to 2 layers, BERT-L2's depth), the question decoded term by term by a 4-layer Transformer
decoder attending to it (here MiniLM's first 4 layers with new cross-attention and an LM head tied to
the embeddings), trained on relevant pairs with teacher forcing as docTquery is (Nogueira et al.
2019); relevance is log P(Q|D), the sum of the question's token log-probabilities. The paper trains
it on MS MARCO; here on paper001.yaml's WikiQA training lists (their relevant pairs), tested on its
WikiQA test lists, and compared with BM25 on the same lists. A G below BM25 where it was trained
fails works_in_domain, so a Table 5 claim against it would read untestable.

    rankuq run rankuq/bench/grids/paper001.yaml --run-dir RUN --plan   # builds the lists
    python experiments/generative_baseline.py RUN --epochs 8 --lr 3e-4

Prints each epoch's training loss and the test lists' AP and R@1 (rankuq's metrics), then BM25's.
"""

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from transformers import AutoTokenizer, BertLMHeadModel, BertModel

from rankuq import methods
from rankuq.backbone import ModelConfig, offline_minilm
from rankuq.bench import metrics
from rankuq.bench.predictions import frame_predictions
from rankuq.bench.rundir.layout import RunLayout
from rankuq.contract import read_shards

METRICS = ["AP", "R@1"]


def lists(run: Path, split: str) -> tuple[Path, pd.DataFrame]:
    folder = RunLayout(run).cached_lists("wikiqa", split)
    return folder, read_shards(folder).to_pandas()


class Generative(torch.nn.Module):
    """log P(question | candidate) from a 2-layer encoder and a 4-layer decoder."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        self.encoder = BertModel.from_pretrained(folder, num_hidden_layers=2, add_pooling_layer=False)
        self.decoder = BertLMHeadModel.from_pretrained(
            folder, num_hidden_layers=4, is_decoder=True, add_cross_attention=True
        )

    def forward(self, questions: list[str], candidates: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Each pair's summed token log-probability of the question and its token count."""
        document = self.tokenizer(
            candidates, padding=True, truncation=True, max_length=64, return_tensors="pt"
        )
        query = self.tokenizer(questions, padding=True, truncation=True, max_length=32, return_tensors="pt")
        hidden = self.encoder(**document).last_hidden_state
        logits = self.decoder(
            input_ids=query.input_ids,
            attention_mask=query.attention_mask,
            encoder_hidden_states=hidden,
            encoder_attention_mask=document.attention_mask,
        ).logits[:, :-1]
        target, kept = query.input_ids[:, 1:], query.attention_mask[:, 1:].bool()
        token = torch.log_softmax(logits.float(), -1).gather(-1, target[..., None])[..., 0]
        return (token * kept).sum(1), kept.sum(1)


def questions(frame: pd.DataFrame) -> list[str]:
    return [" ".join(turns) for turns in frame["context"]]


def measured(test: pd.DataFrame, scores: np.ndarray) -> str:
    table = frame_predictions(test, scores[:, None], probabilistic=False)
    values = metrics.compute(table, METRICS, drop_queries_without_relevant=True)
    return ", ".join(f"{name} {value:.3f}" for name, value in values.items())


def evaluate(model: Generative, test: pd.DataFrame) -> str:
    model.eval()
    with torch.no_grad():
        scores = [
            model(questions(part), part["text"].tolist())[0].numpy()
            for part in (test.iloc[start : start + 64] for start in range(0, len(test), 64))
        ]
    model.train()
    return measured(test, np.concatenate(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a paper001 run directory whose cache holds the WikiQA lists")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    torch.manual_seed(0)
    (_, train), (tested, test) = lists(args.run, "train"), lists(args.run, "test")
    relevant = train[train["label"] > 0]
    model = Generative(offline_minilm())
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    started, rng = time.time(), np.random.default_rng(0)
    print(f"{len(relevant)} relevant training pairs; {test['qid'].nunique()} test questions")
    for epoch in range(1, args.epochs + 1):
        order, losses = rng.permutation(len(relevant)), []
        for start in range(0, len(order), args.batch):
            part = relevant.iloc[order[start : start + args.batch]]
            log_probability, tokens = model(questions(part), part["text"].tolist())
            loss = -log_probability.sum() / tokens.sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
        shown = evaluate(model, test)
        print(f"epoch {epoch}: loss {np.mean(losses):.3f}, test {shown} ({time.time() - started:.0f} s)")
    bm25 = methods.create("bm25").make_scorer(ModelConfig(), [], tested)(test)
    assert isinstance(bm25, np.ndarray)  # a lexical scorer's [n, 1] scores
    print(f"BM25 on the same lists: {measured(test, bm25[:, 0])}")


if __name__ == "__main__":
    main()
