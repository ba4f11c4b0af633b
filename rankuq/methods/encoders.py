"""Feature encoders under the stochastic heads: a tokenised (query, candidate) batch → features [n, K].

Both read the cross-encoder's tokenised pair (``encode_pairs``), so every head runs on either:
``bert`` (a transformer) or ``conv_knrm`` (a kernel-pooling ranker over word embeddings, the
non-transformer backbone of Cohen et al., 2021). Each exposes ``dim`` (K) and ``feature_layers(scope)``,
the layers that spectral normalisation bounds (SNGP): ``pooler``, the layers that make the feature
itself, or ``all``, those plus every layer inside the residual blocks (Ye et al., ICASSP 2023).
"""

from typing import TYPE_CHECKING, Literal, cast

import torch
from torch import nn
from torch.nn import functional

from rankuq.backbone import ModelConfig, build_cross_encoder, load_tokenizer
from rankuq.errors import RankuqError

if TYPE_CHECKING:
    from transformers import PreTrainedModel

EncoderName = Literal["bert", "bert_mean", "conv_knrm"]
SpectralScope = Literal["pooler", "all"]


class BertFeatures(nn.Module):
    """h(x) = tanh(W_p h_first(x) + b_p): the pooled first-token ([CLS], ``<s>``) feature a cross-encoder's
    classifier reads, on any Auto-class backbone (L layers as ``ModelConfig.layers``). W_p is the
    backbone's pretrained pooler where it has one (BERT), else a new layer, as RoBERTa's own
    classification head starts with one.

    ``mean`` (encoder ``bert_mean``): h(x) = the mean of the last layer's token states over the
    attention mask instead, the pooling sentence-transformers trained all-MiniLM-L6-v2 with. Its
    [CLS] state was never trained to summarise a pair, so a new head on it starts from features that
    barely differ between pairs: last_layer_mc's head sat at loss ln 2 on SemEval for 4 epochs."""

    def __init__(self, config: ModelConfig, seed: int, mean: bool = False) -> None:
        super().__init__()
        self.mean = mean
        # transformers types base_model as a module; a pretrained model's body is a PreTrainedModel
        self.bert = cast("PreTrainedModel", build_cross_encoder(config, seed).base_model)
        self.dim: int = self.bert.config.hidden_size
        pooler = getattr(self.bert, "pooler", None)
        # BERT's pooler stays under ``bert`` (so saved members keep their keys); others get their own.
        self.pooler = None if pooler is not None else nn.Linear(self.dim, self.dim)

    def forward(self, **inputs: torch.Tensor) -> torch.Tensor:
        if self.mean:
            states: torch.Tensor = self.bert(**inputs).last_hidden_state
            mask = inputs["attention_mask"].unsqueeze(-1).to(states.dtype)
            return (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        if self.pooler is None:
            return cast(torch.Tensor, self.bert(**inputs).pooler_output)
        return torch.tanh(self.pooler(self.bert(**inputs).last_hidden_state[:, 0]))

    def feature_layers(self, scope: SpectralScope = "pooler") -> list[nn.Module]:
        """The layer that makes the feature (the pooler's dense layer, or ours where the backbone has
        no pooler); with ``all`` also every linear layer of the transformer blocks (attention query,
        key, value and output, the feed-forward pair), each inside a residual."""
        if self.mean:  # no layer makes the mean
            feature = []
        elif self.pooler is None:
            feature = [self.bert.get_submodule("pooler.dense")]
        else:
            feature = [self.pooler]
        blocks = (
            [m for m in self.bert.get_submodule("encoder").modules() if isinstance(m, nn.Linear)]
            if scope == "all"
            else []
        )
        return [*blocks, *feature]


class ConvKNRMFeatures(nn.Module):
    """Conv-KNRM soft-match features (Dai et al., WSDM 2018) of a (query, candidate) pair.

    Word embeddings e → h-gram convolutions q_h = ReLU(conv_h(e)), h = 1..H, L2-normalised → cosine
    matrices M^{ab}_{ij} = cos(q_a,i, d_b,j) for every pair (a, b) of gram sizes → kernel pooling
        φ_k(M) = 0.01 Σ_i log Σ_j exp(−(M_ij − μ_k)² / 2σ_k²)
    with an exact-match kernel (μ = 1, σ = 10⁻³) and soft kernels μ = 0.9, 0.7, …, −0.9 (σ = 0.1):
    K = H² · kernels features. The query is the pair's first segment (token type 0), the candidate
    the second; special tokens, padding and grams that cross a segment are masked out.
    """

    mu: torch.Tensor  # buffers
    sigma: torch.Tensor
    special: torch.Tensor

    def __init__(
        self, embeddings: torch.Tensor, special_ids: list[int], filters: int = 128, grams: int = 3
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(embeddings, freeze=False)
        width = embeddings.shape[1]
        self.convs = nn.ModuleList(nn.Conv1d(width, filters, h) for h in range(1, grams + 1))
        mu = torch.cat([torch.tensor([1.0]), torch.linspace(0.9, -0.9, 10)])
        sigma = torch.cat([torch.tensor([1e-3]), torch.full((10,), 0.1)])
        self.register_buffer("mu", mu, persistent=False)
        self.register_buffer("sigma", sigma, persistent=False)
        self.register_buffer("special", torch.tensor(special_ids), persistent=False)
        self.dim = grams**2 * len(mu)

    @classmethod
    def from_config(cls, config: ModelConfig, seed: int) -> "ConvKNRMFeatures":
        """Initialised with the backbone's word embeddings (the offline MiniLM's, or TINY's random ones)."""
        tokenizer = load_tokenizer(config)
        if "token_type_ids" not in tokenizer.model_input_names:
            raise RankuqError(
                f"model.backbone '{config.backbone}': its tokenizer gives no token_type_ids, which "
                "conv_knrm needs to tell the query from the candidate; use a BERT-style backbone"
            )
        weight = build_cross_encoder(config, seed).get_input_embeddings().weight
        assert isinstance(weight, torch.Tensor)  # a parameter; nn.Module types it Tensor | Module
        return cls(weight.detach().clone(), tokenizer.all_special_ids)

    def forward(self, **inputs: torch.Tensor) -> torch.Tensor:
        ids, types = inputs["input_ids"], inputs["token_type_ids"]
        words = inputs["attention_mask"].bool() & ~torch.isin(ids, self.special)
        query_mask, doc_mask = words & (types == 0), words & (types == 1)
        embedded = self.embed(ids).transpose(1, 2)  # [n, E, S]
        grams = [functional.normalize(functional.relu(conv(embedded)), dim=1) for conv in self.convs]
        masks = [(_gram_mask(query_mask, h), _gram_mask(doc_mask, h)) for h in range(1, len(grams) + 1)]
        features = [
            self._pool(query, document, masks[a][0], masks[b][1])
            for a, query in enumerate(grams)
            for b, document in enumerate(grams)
        ]
        return torch.cat(features, dim=1)

    def _pool(
        self, query: torch.Tensor, document: torch.Tensor, query_mask: torch.Tensor, doc_mask: torch.Tensor
    ) -> torch.Tensor:
        """Kernel pooling of the cosine matrix between query grams [n, F, Sq] and document grams."""
        cosine = torch.einsum("nfi,nfj->nij", query, document)[..., None]  # [n, Sq, Sd, 1]
        kernel = torch.exp(-((cosine - self.mu) ** 2) / (2 * self.sigma**2)) * doc_mask[:, None, :, None]
        soft_tf = torch.log(kernel.sum(dim=2).clamp(min=1e-10)) * 0.01  # [n, Sq, kernels]
        return (soft_tf * query_mask[..., None]).sum(dim=1)

    def feature_layers(self, scope: SpectralScope = "pooler") -> list[nn.Module]:
        """The convolutions, for either scope: Conv-KNRM has no residual blocks."""
        return list(self.convs)


def _gram_mask(mask: torch.Tensor, h: int) -> torch.Tensor:
    """Valid h-grams [n, S − h + 1]: those whose h tokens are all valid."""
    return mask.unfold(1, h, 1).all(dim=-1)


def build_encoder(name: EncoderName, config: ModelConfig, seed: int) -> BertFeatures | ConvKNRMFeatures:
    """The encoder ``name`` on the backbone of ``config``, seeded by ``seed``."""
    if name in ("bert", "bert_mean"):
        return BertFeatures(config, seed, mean=name == "bert_mean")
    return ConvKNRMFeatures.from_config(config, seed)
