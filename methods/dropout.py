"""Dropout for the methods that sample it at test time: masks drawn as 1[u ≥ p] / (1 − p),
u ~ U(0, 1) (``nn.Dropout``'s distribution, fewer passes over memory than its Bernoulli draws), and
attention whose probability dropout takes the same masks (SDPA's own falls back to its unfused path
and Bernoulli draws).
"""

import functools

import torch
from torch import nn

ATTENTION = "rankuq_fast_dropout"


def inverted_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """``x`` with a fresh inverted-dropout mask of rate ``p`` applied."""
    return x * torch.rand_like(x).ge_(p).mul_(1 / (1 - p))


class FastDropout(nn.Dropout):
    """``nn.Dropout`` with the cheap masks."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        return inverted_dropout(x, self.p)


def _attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: object,
) -> tuple[torch.Tensor, None]:
    """Scaled dot-product attention whose probability dropout uses the cheap masks (SDPA's own
    dropout falls back to its unfused path and Bernoulli draws); without dropout, SDPA itself."""
    if dropout == 0:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, 0.0, scaling, **kwargs)
    scores = query @ key.transpose(-1, -2) * (scaling if scaling is not None else query.shape[-1] ** -0.5)
    if attention_mask is not None:  # SDPA's mask: True where attending, or an additive float mask
        scores = (
            scores.masked_fill(~attention_mask, float("-inf"))
            if attention_mask.dtype == torch.bool
            else scores + attention_mask
        )
    probabilities = inverted_dropout(scores.softmax(dim=-1), dropout)
    return (probabilities @ value).transpose(1, 2).contiguous(), None


@functools.cache
def _register() -> None:
    """Registered with transformers on first use (importing transformers costs seconds: --plan)."""
    from transformers import AttentionInterface, AttentionMaskInterface
    from transformers.masking_utils import sdpa_mask

    AttentionInterface.register(ATTENTION, _attention)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)


def use_fast_dropout(model: nn.Module) -> nn.Module:
    """``model`` with every ``nn.Dropout`` drawing the cheap masks, attention's included (in place,
    idempotent; the weights and the distribution of the draws do not change)."""
    for module in list(model.modules()):
        for name, child in module.named_children():
            if type(child) is nn.Dropout:
                setattr(module, name, FastDropout(child.p))
    config = getattr(model, "config", None)
    if config is not None and config._attn_implementation in ("sdpa", "eager"):
        _register()
        model.set_attn_implementation(ATTENTION)
    return model
