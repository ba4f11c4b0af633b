"""Fine-tuning one cross-encoder: balanced pointwise cross-entropy (Penha & Hauff, 2021 §4.1)."""

import copy
import random
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import numpy as np
import pyarrow as pa
import torch
from torch import nn

from rankuq.backbone import ModelConfig
from rankuq.methods.base import Batch
from rankuq.methods.losses import cross_entropy

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

from rankuq.bench.config.training import TrainConfig

Pairs = list[tuple[list[str], str, int]]


def balanced_pairs(table: pa.Table, seed: int, max_queries: int | None = None, negatives: int = 1) -> Pairs:
    """Every relevant candidate plus ``negatives`` times as many non-relevant ones drawn from the same
    list (all of them where the list holds fewer), shuffled; drawn with ``seed``.

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
        chosen = relevant + rng.sample(others, min(negatives * len(relevant), len(others)))
        pairs += [(columns["context"][r], columns["text"][r], int(columns["label"][r] > 0)) for r in chosen]
    rng.shuffle(pairs)
    return pairs


def tokenize_pairs(
    tokenizer: "PreTrainedTokenizerBase", pairs: Pairs, max_length: int
) -> dict[str, list[list[int]]]:
    """Every (context, candidate) pair's token ids after truncation, unpadded, in one tokenizer call:
    the rows ``encode_pairs`` gives (turns joined with [SEP]), before it pads them."""
    sep = f" {tokenizer.sep_token} "  # as encode_pairs joins turns
    return dict(
        tokenizer(
            [sep.join(context) for context, _, _ in pairs],
            [text for _, text, _ in pairs],
            truncation="longest_first",
            max_length=max_length,
        )
    )


class TokenizedPairs:
    """The training pairs tokenized once, each column a [rows × longest] matrix padded as the
    tokenizer pads (its pad id, pad token type id, mask 0), kept on the training device: a step
    slices its batch's rows to their longest instead of tokenizing again on the host, and gives the
    same tensors as ``encode_pairs`` on those rows (padding=True pads a batch to its longest)."""

    def __init__(
        self, tokenizer: "PreTrainedTokenizerBase", pairs: Pairs, max_length: int, device: torch.device
    ) -> None:
        encoded = tokenize_pairs(tokenizer, pairs, max_length)
        self.lengths = [len(ids) for ids in encoded["input_ids"]]
        if tokenizer.padding_side != "right":  # left padding: let the tokenizer place it, batch by batch
            self.encoded, self.matrices = encoded, None
        else:
            width = max(self.lengths, default=0)
            pads = {"input_ids": tokenizer.pad_token_id, "token_type_ids": tokenizer.pad_token_type_id}
            self.matrices = {
                name: _padded(rows, width, pads.get(name, 0)).to(device) for name, rows in encoded.items()
            }
        self.tokenizer, self.device = tokenizer, device
        # int64, as the loop's torch.tensor of Python ints gave before: the same loss
        self.labels = torch.tensor([label for _, _, label in pairs], dtype=torch.long).to(device)

    def batches(self, batches: list[list[int]]) -> Iterator[tuple[dict[str, torch.Tensor], torch.Tensor]]:
        """Each batch's padded inputs and labels on the device: the rows' indices go over once for
        all the batches, so a step copies nothing from the host and never waits for the device."""
        order = torch.tensor([row for rows in batches for row in rows], dtype=torch.long).to(self.device)
        for index, rows in zip(order.split([len(rows) for rows in batches]), batches, strict=True):
            yield self.batch(rows, index)

    def batch(
        self, rows: list[int], index: torch.Tensor | None = None
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """The padded inputs and labels of ``rows`` (``index``: the same rows on the device)."""
        if index is None:
            index = torch.tensor(rows, dtype=torch.long).to(self.device)
        if self.matrices is None:
            subset = {name: [column[row] for row in rows] for name, column in self.encoded.items()}
            padded = self.tokenizer.pad(subset, padding=True, return_tensors="pt")
            return {name: tensor.to(self.device) for name, tensor in padded.items()}, self.labels[index]
        width = max(self.lengths[row] for row in rows)  # host-side lengths: no read from the device
        inputs = {name: matrix[index, :width].long() for name, matrix in self.matrices.items()}
        return inputs, self.labels[index]


def _padded(rows: list[list[int]], width: int, pad: int) -> torch.Tensor:
    """``rows`` right-padded with ``pad`` to ``width`` columns, as int32 (ids fit; half the device
    memory of the tokenizer's int64, which ``batch`` restores)."""
    matrix = np.full((len(rows), width), pad, dtype=np.int32)
    for row, ids in enumerate(rows):
        matrix[row, : len(ids)] = ids
    return torch.from_numpy(matrix)


def length_bucketed_batches(
    lengths: list[int], batch_size: int, rng: random.Random, groups: list[list[int]] | None = None
) -> list[list[int]]:
    """Shuffled batches of rows of similar length, so little compute goes to padding.

    Groups (default: one per row; a query's rows for pairwise losses) are shuffled, sorted by their
    longest row within windows of 50 batches, and packed whole into batches of at most
    ``batch_size`` rows (a larger group is a batch of its own); the batches are shuffled. Each epoch
    sees every row once, in a seeded order.
    """
    units = (
        [list(group) for group in groups] if groups is not None else [[row] for row in range(len(lengths))]
    )
    rng.shuffle(units)
    window = 50 * batch_size
    batches: list[list[int]] = []
    for start in range(0, len(units), window):
        chunk = sorted(units[start : start + window], key=lambda unit: max(lengths[row] for row in unit))
        batch: list[int] = []
        for unit in chunk:
            if batch and len(batch) + len(unit) > batch_size:
                batches.append(batch)
                batch = []
            batch += unit
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def query_groups(pairs: Pairs) -> list[list[int]]:
    """Rows of each query (same context), for losses that compare candidates of a query."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for row, (context, _, _) in enumerate(pairs):
        groups.setdefault(tuple(context), []).append(row)
    return list(groups.values())


# What fine_tune hands to ``on_epoch_end`` and takes back as ``resume``: model, optimizer and schedule
# state dicts, the next epoch, the losses so far and the RNG states (plain types and tensors, so
# ``torch.load(weights_only=True)`` reads it back).
class RngStates(TypedDict):
    """Every global RNG a training step may draw from: dropout and the GP samplers use torch's."""

    torch: torch.Tensor
    cuda: list[torch.Tensor]
    numpy: tuple[list[int], int, int, float]  # MT19937's legacy state less its name: key, pos, gauss
    python: tuple[object, ...]


class TrainState(TypedDict):
    epoch: int  # the epochs done
    model: dict[str, torch.Tensor]
    optimizer: dict[str, object]  # torch's own state dicts
    schedule: dict[str, object]
    losses: list[float]  # every step's
    rng: RngStates
    dev: NotRequired[list[float]]  # early stopping: the dev value of each epoch so far
    best: NotRequired[dict[str, torch.Tensor] | None]  # early stopping: the best epoch's weights


def rng_states() -> RngStates:
    state = np.random.get_state(legacy=True)
    assert isinstance(state, tuple)  # the global generator is MT19937, whose legacy state is a tuple
    _, key, pos, has_gauss, cached = state
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": (key.tolist(), pos, has_gauss, cached),
        "python": random.getstate(),
    }


def set_rng_states(states: RngStates) -> None:
    torch.set_rng_state(states["torch"])
    if states["cuda"]:
        torch.cuda.set_rng_state_all(states["cuda"])
    key, pos, has_gauss, cached = states["numpy"]
    np.random.set_state(("MT19937", np.array(key, dtype=np.uint32), pos, has_gauss, cached))
    random.setstate(states["python"])


def fine_tune(
    model: nn.Module,
    tokenizer: "PreTrainedTokenizerBase",
    pairs: Pairs,
    model_config: ModelConfig,
    train: TrainConfig,
    seed: int,
    loss_fn: Callable[[nn.Module, dict[str, torch.Tensor], torch.Tensor], torch.Tensor] = cross_entropy,
    on_epoch_start: Callable[[], None] = lambda: None,
    whole_queries: bool = False,
    resume: TrainState | None = None,
    on_epoch_end: Callable[[TrainState], bool | None] = lambda state: None,
    shard: tuple[int, int] = (0, 1),
    parameter_groups: list[dict[str, Any]] | None = None,
    refit: Callable[[Iterator[Batch], int], None] | None = None,
) -> list[float]:
    """Train in place with AdamW and a linear warm-up schedule; return the loss of every step.

    ``whole_queries`` keeps a query's rows in one batch (pairwise losses need both candidates).
    ``on_epoch_end`` receives the state after every epoch (to checkpoint it, or score dev for a
    search or early stopping) and returns True to stop there; passing one back as ``resume``
    continues from it and ends with the same weights and losses as an uninterrupted run.
    ``shard`` = (rank, world): a data-parallel worker takes every world-th batch of the seeded order,
    every worker the same number (DDP averages their gradients step by step).
    ``parameter_groups`` (the method's, default all of ``model``'s weights at ``train.lr``) may give
    some weights a learning rate of their own; the warm-up schedule scales every group alike.
    ``refit`` (the method's, if it refits) gets every training batch after each epoch, in eval mode
    without gradients, on every worker (all the batches, not its shard), and a seed of that epoch.
    """
    torch.manual_seed(seed)
    rng = random.Random(seed)
    device = next(model.parameters()).device  # a data-parallel worker's (prepare_model), else the CPU
    # Tokenized once, here, not per step: the host stays free to queue the device's work.
    tokenized = TokenizedPairs(tokenizer, pairs, model_config.max_length, device)
    lengths = tokenized.lengths
    groups = query_groups(pairs) if whole_queries else None
    rank, world = shard
    # Every epoch's batch order is drawn here from the seed, so a resumed run draws the same again.
    every, epochs = [], []  # each epoch's batches, and this worker's share of them
    for _ in range(train.epochs):
        batches = length_bucketed_batches(lengths, train.batch_size, rng, groups)
        every.append(batches)
        epochs.append(batches[rank : len(batches) - len(batches) % world : world])
    core = getattr(model, "module", model)  # the weights without DDP's wrapper: what a checkpoint holds
    # On a GPU one fused kernel updates every weight (the default there launches a few per group); on
    # the CPU the default stays, so CPU-trained members keep their bytes and their cached results.
    optimised = parameter_groups or [{"params": list(model.parameters())}]
    optimizer = torch.optim.AdamW(optimised, lr=train.lr, fused=device.type == "cuda")
    total = sum(len(batches) for batches in epochs)
    from transformers import get_linear_schedule_with_warmup  # a second to import: only training needs it

    schedule = get_linear_schedule_with_warmup(optimizer, int(train.warmup * total), total)
    start, losses = 0, []
    if resume is not None:
        core.load_state_dict(resume["model"])
        optimizer.load_state_dict(resume["optimizer"])
        schedule.load_state_dict(resume["schedule"])
        set_rng_states(resume["rng"])
        start, losses = resume["epoch"], list(resume["losses"])
    for epoch in range(start, train.epochs):
        model.train()  # again each epoch: on_epoch_end may have scored in eval mode
        on_epoch_start()
        steps = []  # the epoch's losses, left on the device: reading each one would wait for its step
        for inputs, labels in tokenized.batches(epochs[epoch]):
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=train.precision == "bf16"):
                loss = loss_fn(model, inputs, labels)
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            steps.append(loss.detach())
        losses += torch.stack(steps).tolist() if steps else []  # one host sync per epoch
        if refit is not None:  # before the state is kept: the dev lists and the checkpoint see it
            model.eval()
            with torch.no_grad(), torch.random.fork_rng():  # the training's random numbers stay as without it
                refit(tokenized.batches(every[epoch]), seed * 1_000 + epoch)
        state: TrainState = {
            "epoch": epoch + 1,
            "model": core.state_dict(),
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "losses": losses,
            "rng": rng_states(),
        }
        if on_epoch_end(copy.deepcopy(state)):  # a snapshot: the live tensors change in the next epoch
            break
    return losses
