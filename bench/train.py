"""Fine-tuning one cross-encoder: balanced pointwise cross-entropy (paper 000 §4.1)."""

import random
from collections.abc import Callable
from typing import Annotated

import pyarrow as pa
import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn
from transformers import PreTrainedTokenizerBase, get_linear_schedule_with_warmup

from methods.backbone import ModelConfig, encode_pairs


class TrainConfig(BaseModel):
    """Optimisation settings shared by every trained member of a grid."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epochs: Annotated[int, Field(ge=1)] = 1
    batch_size: Annotated[int, Field(ge=1)] = 16
    lr: Annotated[float, Field(gt=0)] = 5e-5
    warmup: Annotated[float, Field(ge=0, lt=1)] = 0.1
    max_queries: Annotated[int, Field(ge=1)] | None = Field(None, description="cap on training queries")


Pairs = list[tuple[list[str], str, int]]


def balanced_pairs(table: pa.Table, seed: int, max_queries: int | None = None) -> Pairs:
    """Every relevant candidate plus as many non-relevant ones drawn from the same list, shuffled.

    Queries without a relevant candidate give no pair. ``max_queries`` keeps the first queries.
    """
    rng = random.Random(seed)
    columns = table.select(["qid", "context", "text", "label"]).to_pydict()
    by_query: dict[str, list[int]] = {}
    for row, qid in enumerate(columns["qid"]):
        by_query.setdefault(qid, []).append(row)
    pairs: Pairs = []
    for rows in list(by_query.values())[:max_queries]:
        relevant = [row for row in rows if columns["label"][row] > 0]
        others = [row for row in rows if columns["label"][row] <= 0]
        chosen = relevant + rng.sample(others, min(len(relevant), len(others)))
        pairs += [(columns["context"][r], columns["text"][r], int(columns["label"][r] > 0)) for r in chosen]
    rng.shuffle(pairs)
    return pairs


def cross_entropy(model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
    """Pointwise cross-entropy of the 2-way head (paper 000)."""
    return nn.functional.cross_entropy(model(**inputs).logits, labels)


def pair_lengths(tokenizer: PreTrainedTokenizerBase, pairs: Pairs, max_length: int) -> list[int]:
    """Token count of every (context, candidate) pair after truncation."""
    encoded = tokenizer(
        [f" {tokenizer.sep_token} ".join(context) for context, _, _ in pairs],  # as encode_pairs joins turns
        [text for _, text, _ in pairs],
        truncation="longest_first",
        max_length=max_length,
    )
    return [len(ids) for ids in encoded["input_ids"]]


def length_bucketed_batches(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of rows of similar length, so little compute goes to padding.

    Rows are shuffled, sorted by length within windows of 50 batches, cut into batches, and the
    batches shuffled: each epoch sees every row once, in a seeded order.
    """
    order = list(range(len(lengths)))
    rng.shuffle(order)
    window = 50 * batch_size
    batches = []
    for start in range(0, len(order), window):
        chunk = sorted(order[start : start + window], key=lengths.__getitem__)
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def fit(
    model: nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    pairs: Pairs,
    model_config: ModelConfig,
    train: TrainConfig,
    seed: int,
    loss_fn: Callable[[nn.Module, dict[str, torch.Tensor], torch.Tensor], torch.Tensor] = cross_entropy,
) -> list[float]:
    """Train in place with AdamW and a linear warm-up schedule; return the loss of every step."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    steps_per_epoch = -(-len(pairs) // train.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=train.lr)
    total = steps_per_epoch * train.epochs
    schedule = get_linear_schedule_with_warmup(optimizer, int(train.warmup * total), total)
    losses = []
    model.train()
    lengths = pair_lengths(tokenizer, pairs, model_config.max_length)
    for _ in range(train.epochs):
        for batch_rows in length_bucketed_batches(lengths, train.batch_size, rng):
            contexts, texts, labels = zip(*(pairs[i] for i in batch_rows), strict=True)
            inputs = encode_pairs(tokenizer, list(contexts), list(texts), model_config.max_length)
            loss = loss_fn(model, inputs, torch.tensor(labels))
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            losses.append(loss.item())
    return losses
