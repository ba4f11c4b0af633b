"""Fixtures of the methods tests: the tiny random BERT, a tokenised batch, and a few training steps."""

from collections.abc import Callable, Iterator

import pandas as pd
import pytest
import torch
from torch import nn

from rankuq import methods
from rankuq.backbone import TINY, ModelConfig, encode_pairs, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.training_loop import Pairs, fine_tune
from rankuq.methods.base import MethodParams, NeuralMethod

TINY_MODEL = ModelConfig(backbone=TINY, max_length=32)
# Two queries, each with a relevant candidate (first) and a non-relevant one.
CONTEXTS = [["who wrote hamlet"]] * 2 + [["how tall is everest"]] * 2
TEXTS = ["hamlet was written by shakespeare", "paris is in france", "everest is 8849 m tall", "the sea"]
LABELS = [1, 0, 1, 0]
PAIRS: Pairs = [([*c], t, y) for c, t, y in zip(CONTEXTS, TEXTS, LABELS, strict=True)]
# Three candidate rows of two queries, as a scorer reads them (contract 1's scored columns).
BATCH = pd.DataFrame(
    {
        "qid": ["q1", "q1", "q2"],
        "context": [["who wrote hamlet"], ["who wrote hamlet"], ["how tall is everest"]],
        "cid": ["a", "b", "c"],
        "text": ["hamlet was written by shakespeare", "paris is in france", "everest is 8849 m tall"],
        "label": [1, 0, 1],
    }
)


@pytest.fixture(autouse=True, scope="module")
def one_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread, and the test machine's two cores are shared."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def encode() -> Callable[[slice], dict[str, torch.Tensor]]:
    """Tokenised rows of the fixture (padded to the longest of them)."""
    tokenizer = load_tokenizer(TINY_MODEL)
    return lambda rows: encode_pairs(tokenizer, CONTEXTS[rows], TEXTS[rows], TINY_MODEL.max_length)


@pytest.fixture(scope="module")
def inputs(encode: Callable[[slice], dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    return encode(slice(None))


@pytest.fixture(scope="module")
def labels() -> torch.Tensor:
    return torch.tensor(LABELS)


Builder = Callable[..., tuple[NeuralMethod, MethodParams, nn.Module]]


@pytest.fixture(scope="module")
def build() -> Builder:
    """``build(name, raw, seed=0, model=TINY_MODEL)``: the method, its parameters and a fresh model."""

    def make(
        name: str, raw: dict, seed: int = 0, model: ModelConfig = TINY_MODEL
    ) -> tuple[NeuralMethod, MethodParams, nn.Module]:
        method = methods.create(name, raw, "test")
        assert isinstance(method, NeuralMethod)
        return method, method.params, method.build_model(model, seed)

    return make


Trainer = Callable[..., list[float]]


@pytest.fixture(scope="module")
def train_steps(build: Builder) -> Trainer:
    """Losses of ``steps`` full-batch steps of ``bench.engine.training_loop.fine_tune`` on the tiny
    fixture."""

    def run(name: str, raw: dict, steps: int = 12, lr: float = 3e-3) -> list[float]:
        method, _params, model = build(name, raw)
        config = TrainConfig(epochs=steps, batch_size=len(PAIRS), lr=lr, warmup=0)
        return fine_tune(
            model,
            load_tokenizer(TINY_MODEL),
            PAIRS,
            TINY_MODEL,
            config,
            seed=0,
            loss_fn=lambda net, batch, y: method.loss(net, batch, y),
        )

    return run


@pytest.fixture
def tiny_model() -> ModelConfig:
    return TINY_MODEL


@pytest.fixture
def batch() -> pd.DataFrame:
    """Scorer rows of two queries (a fresh copy: a test may change it)."""
    return BATCH.copy()
