"""Training losses: the cross-encoder's 2-way cross-entropy, and for single-logit rankers s(x) ∈ ℝ
pointwise, focal and pairwise ones.

Pairwise losses compare the two candidates of a (relevant, non-relevant) pair of the *same* query
(Cohen et al., 2021, §3.2); the query of a row is its tokenised first segment, so no extra batch column is
needed, but the batch must hold a query's candidates together.
"""

from typing import Literal

import torch
from torch import nn
from torch.nn import functional

from rankuq.errors import RankuqError

LossName = Literal["pointwise_ce", "pairwise_ce", "pairwise_hinge"]


def cross_entropy(model: nn.Module, inputs: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
    """Pointwise cross-entropy of a cross-encoder's 2-way head (Penha & Hauff, 2021)."""
    return functional.cross_entropy(model(**inputs).logits, labels)


def pointwise_ce(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """L = −y log σ(s) − (1 − y) log(1 − σ(s)), the binary form of the 2-way softmax cross-entropy."""
    return functional.binary_cross_entropy_with_logits(scores, labels.to(scores.dtype))


def focal(scores: torch.Tensor, labels: torch.Tensor, gamma: float) -> torch.Tensor:
    """L = −(1 − p_t)^γ log p_t with p_t = σ(s) for relevant rows, 1 − σ(s) otherwise
    (Ye et al., ICASSP 2023, eq. 6).

    γ = 0 is the cross-entropy; larger γ down-weights confident rows.
    """
    log_pt = -functional.binary_cross_entropy_with_logits(scores, labels.to(scores.dtype), reduction="none")
    return (-((1 - log_pt.exp()) ** gamma) * log_pt).mean()


def same_query_margins(
    scores: torch.Tensor, labels: torch.Tensor, inputs: dict[str, torch.Tensor]
) -> torch.Tensor:
    """s(x₊) − s(x₋) for every (relevant, non-relevant) pair of rows that share a query.

    Raises when the batch mixes labels but pairs none of them: the training batches must keep
    each query's candidates together for a pairwise loss.
    """
    segment = (inputs["token_type_ids"] == 0) & inputs["attention_mask"].bool()
    query = inputs["input_ids"] * segment
    same = (query[:, None, :] == query[None, :, :]).all(dim=-1)
    pairs = same & (labels[:, None] > labels[None, :])
    if not pairs.any() and labels.max() > labels.min():
        raise RankuqError(
            "pairwise loss: no training batch pairs a relevant and a non-relevant candidate of the "
            "same query; batch whole queries (bench.engine.training_loop.fine_tune with query-grouped "
            "batches) or use loss: pointwise_ce"
        )
    return (scores[:, None] - scores[None, :])[pairs]


def pairwise_ce(margins: torch.Tensor) -> torch.Tensor:
    """L = −log σ(s₊ − s₋) = log(1 + exp(−(s₊ − s₋))) (Cohen et al., 2021, §3.2)."""
    return functional.softplus(-margins).sum() / max(margins.numel(), 1)


def relaxed_hinge(margins: torch.Tensor) -> torch.Tensor:
    """L = ½ ‖1 − (s₊ − s₋)‖²: the pairwise hinge relaxed to a Gaussian regression
    (Cohen et al., 2021, eq. 8–10)."""
    return 0.5 * (1 - margins).square().sum() / max(margins.numel(), 1)


def ranking_loss(
    name: LossName, scores: torch.Tensor, labels: torch.Tensor, inputs: dict[str, torch.Tensor]
) -> torch.Tensor:
    """The loss ``name`` of one batch of scores [n] with 0/1 labels."""
    if name == "pointwise_ce":
        return pointwise_ce(scores, labels)
    margins = same_query_margins(scores, labels, inputs)
    return pairwise_ce(margins) if name == "pairwise_ce" else relaxed_hinge(margins)
