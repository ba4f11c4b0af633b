"""Dropout for the methods that sample it at test time, cheaper than ``nn.Dropout`` on a CPU: masks
from 16 random bits per element (``keep_mask``) and attention whose probability dropout takes the same
masks (SDPA's own falls back to its unfused path and Bernoulli draws).
"""

import functools
from typing import TYPE_CHECKING, Any, cast

import torch
from torch import nn

if TYPE_CHECKING:
    from transformers import PreTrainedModel

ATTENTION = "rankuq_fast_dropout"
# Part of the cache keys of what these masks draw (Method.draws): bump it when the same seed draws other
# masks. 2: keep_mask's 16 bits per element (1: torch.rand).
MASKS = 2


def keep_mask(like: torch.Tensor, p: float) -> torch.Tensor:
    """1 where an element of ``like`` is kept, 0 where it is dropped (rate ``p``), in its shape and dtype.

    Each element takes 16 random bits, four per 64-bit draw (``torch.rand`` spends a 32-bit draw per
    element, most of MC dropout's overhead on a CPU): kept where the bits, as a signed integer, are
    ≥ −2^15 + round(p · 2^16). The drop rate is p rounded to 1/65,536 (0.1 → 0.100006).
    """
    n = like.numel()
    words = torch.empty(-(-n // 4), dtype=torch.int64, device=like.device).random_(-(2**63), None)
    bits = words.view(torch.int16)[:n].view(like.shape)
    mask = bits.to(torch.float32).ge_(-(2**15) + round(p * 2**16))  # float32 holds every int16 exactly
    return mask if like.dtype == torch.float32 else mask.to(like.dtype)


def inverted_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """``x`` with a fresh inverted-dropout mask of rate ``p`` applied (in the mask's memory: a fresh
    tensor per product costs page faults that are a visible share of MC dropout on a CPU)."""
    return keep_mask(x, p).mul_(1 / (1 - p)).mul_(x)


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
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Scaled dot-product attention whose probability dropout uses the cheap masks (SDPA's own
    dropout falls back to its unfused path and Bernoulli draws); without dropout, SDPA itself."""
    if dropout == 0:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, 0.0, scaling, **kwargs)
    # In place where the tensor is (batch, heads, length, length); scaled where it is smaller.
    scores = (query * (scaling if scaling is not None else query.shape[-1] ** -0.5)) @ key.transpose(-1, -2)
    if attention_mask is not None:  # SDPA's mask: True where attending, or an additive float mask
        if attention_mask.dtype == torch.bool:  # made additive once for all heads (masked_fill_ is slower)
            additive = torch.zeros(attention_mask.shape, dtype=scores.dtype, device=scores.device)
            attention_mask = additive.masked_fill_(~attention_mask, float("-inf"))
        scores += attention_mask
    probabilities = torch.softmax(scores, dim=-1, out=scores)  # in place: no second (b, h, l, l) tensor
    attended = (probabilities.mul_(keep_mask(probabilities, dropout)) @ value).mul_(1 / (1 - dropout))
    return attended.transpose(1, 2).contiguous(), None


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
        cast("PreTrainedModel", model).set_attn_implementation(ATTENTION)  # a model with a config
    return model
