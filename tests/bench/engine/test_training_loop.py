import copy
import random

import numpy as np
import pyarrow as pa
import pytest
import torch

from rankuq.backbone import TINY, ModelConfig, build_cross_encoder, encode_pairs, load_tokenizer
from rankuq.bench.config.training import TrainConfig
from rankuq.bench.engine.training_loop import TokenizedPairs, balanced_pairs, fine_tune
from rankuq.methods.losses import cross_entropy

TABLE = pa.table(
    {
        "qid": ["q1"] * 4 + ["q2"] * 3 + ["q3"] * 2,
        "context": [["a question"]] * 9,
        "text": [f"candidate {i}" for i in range(9)],
        "label": [1, 0, 0, 0, 1, 1, 0, 0, 0],
    }
)


@pytest.fixture(scope="module")
def fit_inputs():
    """What each fit test trains on: the tiny BERT's config (dropout 0.1 draws from torch's RNG),
    its tokenizer and TABLE's balanced pairs."""
    model_config = ModelConfig(backbone=TINY, max_length=16)
    return model_config, load_tokenizer(model_config), balanced_pairs(TABLE, seed=0)


def test_pairs_are_balanced_per_query_and_skip_queries_without_relevant():
    pairs = balanced_pairs(TABLE, seed=0)
    labels = [label for _, _, label in pairs]
    # q1: 1 rel + 1 non-rel; q2: 2 rel + 1 non-rel (all it has); q3: none.
    assert sorted(labels) == [0, 0, 1, 1, 1]
    assert balanced_pairs(TABLE, seed=0) == pairs
    assert len(balanced_pairs(TABLE, seed=0, max_queries=1)) == 2


def test_negatives_per_positive_draw_more_of_each_list():
    labels = sorted(label for _, _, label in balanced_pairs(TABLE, seed=0, negatives=2))
    # q1: 1 rel + 2 of its 3 non-rel; q2: 2 rel + its only non-rel; q3: none
    assert labels == [0, 0, 0, 1, 1, 1]
    texts = {text for _, text, _ in balanced_pairs(TABLE, seed=0, negatives=9)}
    assert texts == {f"candidate {i}" for i in range(7)}  # every candidate of q1 and q2


def test_same_seed_same_losses(fit_inputs):
    model_config, tokenizer, pairs = fit_inputs
    train = TrainConfig(epochs=2, batch_size=2)
    runs = [
        fine_tune(build_cross_encoder(model_config, 3), tokenizer, pairs, model_config, train, seed=3)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert len(runs[0]) == 2 * 3  # 5 pairs in batches of 2, twice


def test_a_run_resumed_from_an_epoch_state_ends_with_the_same_weights_and_losses(fit_inputs):
    model_config, tokenizer, pairs = fit_inputs
    train = TrainConfig(epochs=3, batch_size=2)

    def noisy_loss(net, inputs, labels):  # draws from numpy's and Python's global RNGs too
        return cross_entropy(net, inputs, labels) * (1 + np.random.rand() / 10) * (1 + random.random() / 10)

    def run(resume=None):
        states = []
        model = build_cross_encoder(model_config, 3)
        fit_args = (model, tokenizer, pairs, model_config, train, 3, noisy_loss)
        losses = fine_tune(*fit_args, resume=resume, on_epoch_end=states.append)
        return model.state_dict(), losses, states

    weights, losses, states = run()
    assert [state["epoch"] for state in states] == [1, 2, 3]
    random.seed(9), np.random.seed(9), torch.manual_seed(9)  # whatever a restarted process holds
    resumed_weights, resumed_losses, resumed_states = run(resume=states[0])
    assert [state["epoch"] for state in resumed_states] == [2, 3]
    assert resumed_losses == losses
    assert all(torch.equal(weights[name], resumed_weights[name]) for name in weights)
    assert not torch.equal(states[0]["model"]["classifier.weight"], weights["classifier.weight"])


def test_training_stops_after_the_epoch_whose_callback_says_so(fit_inputs):
    model_config, tokenizer, pairs = fit_inputs
    train = TrainConfig(epochs=3, batch_size=2)
    whole = fine_tune(build_cross_encoder(model_config, 3), tokenizer, pairs, model_config, train, seed=3)
    epochs = []

    def stop_after_two(state):
        epochs.append(state["epoch"])
        return state["epoch"] == 2

    stopped = fine_tune(
        build_cross_encoder(model_config, 3),
        tokenizer,
        pairs,
        model_config,
        train,
        3,
        on_epoch_end=stop_after_two,
    )
    assert epochs == [1, 2] and stopped == whole[:6]  # 3 batches an epoch; the same steps until the stop


def test_a_data_parallel_worker_takes_its_share_of_the_batches(fit_inputs):
    model_config, tokenizer, pairs = fit_inputs
    train = TrainConfig(epochs=2, batch_size=2)
    steps = [
        len(
            fine_tune(
                build_cross_encoder(model_config, 3),
                tokenizer,
                pairs,
                model_config,
                train,
                3,
                shard=(rank, 2),
            )
        )
        for rank in (0, 1)
    ]
    assert steps == [2, 2]  # 3 batches an epoch: one each, the third left out so the ranks step together


@pytest.mark.parametrize("shard", [(0, 1), (1, 2)])
def test_refit_sees_every_training_row_after_each_epoch_and_changes_no_training_number(fit_inputs, shard):
    """A method's refit (pg_gp's posterior) runs after every epoch, in eval mode without gradients, over
    all the pairs, a data-parallel worker's too; its own random draws leave the training's untouched."""
    model_config, tokenizer, pairs = fit_inputs
    train = TrainConfig(epochs=2, batch_size=2)
    seen = []

    def refit(batches, seed):
        rows = [(len(labels), torch.is_grad_enabled(), model.training) for _, labels in batches]
        torch.randn(100)  # a Gibbs sampler's draws
        seen.append((seed, sum(n for n, _, _ in rows), {(grad, training) for _, grad, training in rows}))

    def run(refit=None):
        nonlocal model
        model = build_cross_encoder(model_config, 3)
        return fine_tune(model, tokenizer, pairs, model_config, train, 3, shard=shard, refit=refit)

    model = None
    assert run(refit) == run()
    assert seen == [(3_000, 5, {(False, False)}), (3_001, 5, {(False, False)})]


def test_length_bucketed_batches_cover_every_row_once_with_similar_lengths():
    import random

    from rankuq.bench.engine.training_loop import length_bucketed_batches

    lengths = [random.Random(i).randint(5, 60) for i in range(1000)]
    batches = length_bucketed_batches(lengths, 16, random.Random(0))
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 5  # a random batch of 16 spans about 50 tokens
    assert batches == length_bucketed_batches(lengths, 16, random.Random(0))


@pytest.mark.parametrize("side", ["right", "left"])
def test_pre_tokenized_batches_are_the_tensors_encode_pairs_gives(fit_inputs, side):
    """Tokenized once (issue 40): a batch sliced from the padded matrices equals encode_pairs on the
    same rows, ids, types, mask and dtype, whatever the rows' lengths; left padding too (tokenizer.pad)."""
    model_config, tokenizer, _ = fit_inputs
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.padding_side = side
    pairs = [([f"question {i}", "turn"] if i % 3 else [f"q {i}"], "word " * i, i % 2) for i in range(12)]
    tokenized = TokenizedPairs(tokenizer, pairs, model_config.max_length, torch.device("cpu"))
    chosen_rows = [[0], [3, 1, 11], [5, 2], list(range(12))]
    for rows, (inputs, labels) in zip(chosen_rows, tokenized.batches(chosen_rows), strict=True):
        chosen = [pairs[row] for row in rows]
        expected = encode_pairs(tokenizer, [c for c, _, _ in chosen], [t for _, t, _ in chosen], 16)
        assert inputs.keys() == expected.keys()
        for name, tensor in expected.items():
            assert inputs[name].dtype == tensor.dtype and torch.equal(inputs[name], tensor), (rows, name)
        assert labels.tolist() == [label for _, _, label in chosen] and labels.dtype == torch.long
