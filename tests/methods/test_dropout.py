import pytest
import torch
from torch import nn

from rankuq import methods
from rankuq.backbone import ModelConfig, encode_pairs, load_tokenizer
from rankuq.methods.base import NeuralMethod
from rankuq.methods.dropout import FastDropout, _attention, keep_mask, use_fast_dropout
from rankuq.tasks import data_root, get

L2 = ModelConfig(layers=2, max_length=64)


@pytest.fixture(scope="module")
def wikiqa_inputs() -> dict[str, torch.Tensor]:
    """The first 16 (question, sentence) pairs of the real WikiQA test split."""
    table = get("wikiqa")().load("test", data_root()).slice(0, 16)
    contexts, texts = table.column("context").to_pylist(), table.column("text").to_pylist()
    return encode_pairs(load_tokenizer(L2), contexts, texts, L2.max_length)


@pytest.fixture(scope="module")
def model_pair() -> tuple[nn.Module, nn.Module]:
    """The offline MiniLM-L2 cross-encoder, as built and with fast dropout (same seed)."""
    bert = methods.create("bert", {})
    assert isinstance(bert, NeuralMethod)
    build = bert.build_model
    return build(L2, 0).eval(), use_fast_dropout(build(L2, 0)).eval()


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_fast_dropout_drops_p_and_keeps_the_mean(p):
    torch.manual_seed(0)
    out = FastDropout(p)(torch.ones(400_000))
    kept = out != 0
    assert (~kept).float().mean().item() == pytest.approx(p, abs=0.003)
    assert torch.allclose(out[kept], torch.tensor(1 / (1 - p)))
    assert out.mean().item() == pytest.approx(1.0, abs=0.01)
    assert torch.equal(FastDropout(p).eval()(torch.ones(3)), torch.ones(3))


def test_every_dropout_is_swapped_once(model_pair):
    _, fast = model_pair
    kinds = {type(m) for m in fast.modules() if isinstance(m, nn.Dropout)}
    assert kinds == {FastDropout}
    assert fast.config._attn_implementation == "rankuq_fast_dropout"
    before = [id(m) for m in fast.modules()]
    assert [id(m) for m in use_fast_dropout(fast).modules()] == before  # idempotent


def test_without_dropout_the_outputs_do_not_change(model_pair, wikiqa_inputs):
    plain, fast = model_pair
    with torch.inference_mode():
        assert torch.equal(plain(**wikiqa_inputs).logits, fast(**wikiqa_inputs).logits)


def test_attention_dropout_draws_inverted_masks(model_pair, wikiqa_inputs):
    """With every rate at 0.5 (attention's included) the logits move; a fixed seed repeats the draw."""
    _, fast = model_pair
    fast.train()
    for module in fast.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.5
    with torch.inference_mode():
        torch.manual_seed(3)
        first = fast(**wikiqa_inputs).logits
        torch.manual_seed(3)
        again = fast(**wikiqa_inputs).logits
        fast.eval()
        deterministic = fast(**wikiqa_inputs).logits
    for module in fast.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.1
    assert torch.equal(first, again)
    assert not torch.allclose(first, deterministic, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_keep_masks_drop_p_rounded_to_16_bits_in_the_input_s_dtype(dtype):
    torch.manual_seed(0)
    mask = keep_mask(torch.empty(1_000, 1_000, dtype=dtype), 0.1)
    assert mask.dtype == dtype and mask.shape == (1_000, 1_000)
    assert set(mask.unique().tolist()) == {0.0, 1.0}
    dropped = 1 - mask.float().mean().item()  # 1e6 draws: standard error 3e-4
    assert dropped == pytest.approx(round(0.1 * 2**16) / 2**16, abs=1.5e-3)


def test_attention_dropout_is_the_softmax_times_an_inverted_mask_times_the_values():
    """Worked out by hand from the same seeded mask: softmax(QKᵀ/√d, masked keys −∞) ⊙ m / (1 − p) · V."""
    torch.manual_seed(0)
    query, key, value = (torch.randn(2, 3, 5, 4) for _ in range(3))
    attending = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    attending[1, ..., 3:] = False  # the second pair's last two tokens are padding
    torch.manual_seed(1)
    attended, _ = _attention(nn.Module(), query, key, value, attending, dropout=0.3)
    torch.manual_seed(1)
    kept = keep_mask(torch.empty(2, 3, 5, 5), 0.3)
    weights = (query @ key.transpose(-1, -2) / 2).masked_fill(~attending, float("-inf")).softmax(-1)
    expected = ((weights * kept / 0.7) @ value).transpose(1, 2)
    assert torch.allclose(attended, expected, atol=1e-6)
    assert 0 < kept.mean() < 1  # some weights were dropped
