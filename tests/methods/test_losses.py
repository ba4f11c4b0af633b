"""Training losses of single-logit rankers: focal against cross-entropy, pairwise margins of the same
query's candidates and the pairwise losses over them."""

import pytest
import torch

from rankuq.errors import RankuqError
from rankuq.methods.losses import (
    focal,
    pairwise_ce,
    pointwise_ce,
    ranking_loss,
    relaxed_hinge,
    same_query_margins,
)


def test_focal_loss_with_gamma_zero_is_cross_entropy():
    scores, labels = torch.tensor([2.0, -1.0, 0.3]), torch.tensor([1, 0, 0])
    assert focal(scores, labels, 0.0) == pytest.approx(pointwise_ce(scores, labels).item())


def test_focal_loss_down_weights_confident_rows():
    labels = torch.tensor([1])
    confident, unsure = torch.tensor([4.0]), torch.tensor([0.0])

    def ratio(scores: torch.Tensor) -> float:
        return (focal(scores, labels, 2.0) / pointwise_ce(scores, labels)).item()

    assert ratio(confident) == pytest.approx((1 - torch.sigmoid(confident)).item() ** 2)
    assert ratio(confident) < ratio(unsure) == pytest.approx(0.25)


def test_pairwise_margins_pair_candidates_of_the_same_query_only(inputs, labels):
    scores = torch.tensor([2.0, 0.5, 1.0, 3.0])
    margins = same_query_margins(scores, labels, inputs)
    assert sorted(margins.tolist()) == [-2.0, 1.5]  # (hamlet+, paris−) and (everest+, sea−)
    assert pairwise_ce(margins) == pytest.approx(float(torch.nn.functional.softplus(-margins).mean()))
    assert relaxed_hinge(margins) == pytest.approx(0.5 * ((1 + 2) ** 2 + (1 - 1.5) ** 2) / 2)


def test_pairwise_loss_without_same_query_pairs_is_a_clear_error(inputs):
    crossed = torch.tensor([1, 1, 0, 0])  # each query's candidates share a label
    with pytest.raises(RankuqError, match="batch whole queries"):
        same_query_margins(torch.zeros(4), crossed, inputs)


def test_ranking_loss_picks_the_named_loss(inputs, labels):
    scores = torch.tensor([2.0, 0.5, 1.0, 3.0])
    margins = torch.tensor([1.5, -2.0])  # the fixture's two same-query pairs, in row order
    assert ranking_loss("pointwise_ce", scores, labels, inputs) == pointwise_ce(scores, labels)
    assert ranking_loss("pairwise_ce", scores, labels, inputs) == pytest.approx(pairwise_ce(margins).item())
    assert ranking_loss("pairwise_hinge", scores, labels, inputs) == pytest.approx(
        relaxed_hinge(margins).item()
    )
