"""Extraction on tiny random models of every family, through the same loading code the app uses."""
import numpy as np
import pytest
from tiny import FAMILIES, TEXT

from explorer import maths
from explorer.attention.result import extract


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes_rows_and_fidelity(tiny_loaded, family):
    loaded = tiny_loaded(family)
    result = extract(loaded, TEXT)
    n = len(result.tokens)
    assert result.weights.dtype == np.float32
    assert result.weights.shape == (2, 4, n, n) == result.scores.shape
    assert len(result.token_ids) == n == len(result.special) == len(result.word_ids)
    np.testing.assert_allclose(result.weights.sum(-1), 1.0, atol=1e-5)
    # our own softmax of the captured pre-softmax scores reproduces the model's weights
    np.testing.assert_allclose(maths.softmax(result.scores), result.weights, atol=1e-5)
    assert result.fidelity.shape == (2, 4) and result.fidelity.max() < 1e-5


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_decoders_are_causal(tiny_loaded, family):
    result = extract(tiny_loaded(family), TEXT)
    assert result.facts.causal and result.facts.kind == "decoder"
    upper = np.triu(np.ones(result.weights.shape[-2:], dtype=bool), k=1)
    assert np.all(result.weights[..., upper] == 0.0)
    assert np.all(np.isneginf(result.scores[..., upper]))


def test_encoder_is_bidirectional_with_special_tokens(tiny_loaded):
    result = extract(tiny_loaded("bert"), TEXT)
    assert not result.facts.causal
    assert result.tokens[0] == "[CLS]" and result.tokens[-1] == "[SEP]"
    assert result.special.tolist() == [True] + [False] * (len(result.tokens) - 2) + [True]
    assert result.word_ids[0] == -1 and result.word_ids[-1] == -1
    assert np.triu(result.weights[0, 0], k=1).max() > 0  # sees later tokens


def test_model_facts(tiny_loaded):
    llama = extract(tiny_loaded("llama"), TEXT).facts
    assert (llama.n_layers, llama.n_heads, llama.n_kv_heads, llama.d_head, llama.position) == (2, 4, 2, 8, "rope")
    bert = extract(tiny_loaded("bert"), TEXT).facts
    assert (bert.n_kv_heads, bert.position, bert.kind) == (4, "learned", "encoder")


def test_grouped_query_heads_share_keys():
    """4 query heads, 2 key heads: heads 0-1 read key head 0 and heads 2-3 key head 1."""
    import torch

    from explorer.model.capture import recompute
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 4, 5, 8, generator=g), torch.randn(1, 2, 5, 8, generator=g)
    scores, weights = recompute(dict(q=q, k=k, scaling=0.5, mask=None, bias=None))
    for head, kv in [(0, 0), (1, 0), (2, 1), (3, 1)]:
        np.testing.assert_allclose(scores[head], (q[0, head] @ k[0, kv].T * 0.5).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.sum(-1), 1.0)


def test_encoder_decoder_parts(tiny_loaded):
    result = extract(tiny_loaded("t5"), TEXT, target="the cat sat")
    assert set(result.parts) == {"encoder", "decoder", "cross"}
    dec, cross = result.part_named("decoder"), result.part_named("cross")
    assert cross.keys == result.tokens and cross.tokens == dec.tokens
    assert cross.weights.shape == (2, 4, len(dec.tokens), len(result.tokens))
    upper = np.triu(np.ones(dec.weights.shape[-2:], dtype=bool), k=1)
    assert np.all(dec.weights[..., upper] == 0)
    for part in result.parts.values():
        np.testing.assert_allclose(part.weights.sum(-1), 1.0, atol=1e-5)
        assert part.fidelity.max() < 1e-5


def test_long_text_is_cut_and_says_so(tiny_loaded):
    result = extract(tiny_loaded("bert"), " ".join(["the cat sat on the mat"] * 20), max_tokens=10)
    assert result.truncated and len(result.tokens) == 10 and result.n_text_tokens > 100
    assert result.tokens[-1] == "[SEP]"


def test_a_text_that_fits_is_not_cut_even_at_the_limit(tiny_loaded):
    loaded = tiny_loaded("bert")
    whole = extract(loaded, "the cat sat on the mat")
    assert not whole.truncated and whole.n_text_tokens == len(whole.tokens)
    exact = extract(loaded, "the cat sat on the mat", max_tokens=len(whole.tokens))   # exactly the limit
    assert not exact.truncated and exact.n_text_tokens == len(exact.tokens) == len(whole.tokens)
    one_short = extract(loaded, "the cat sat on the mat", max_tokens=len(whole.tokens) - 1)
    assert one_short.truncated and one_short.n_text_tokens == len(whole.tokens)


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_is_refused_clearly(tiny_loaded, text):
    with pytest.raises(ValueError, match="empty"):
        extract(tiny_loaded("bert"), text)


def test_missing_attentions_raise_helpful_error():
    from explorer.attention.result import _stack
    with pytest.raises(RuntimeError, match="eager"):
        _stack((), 6, "self")


def test_recompute_default_scale_and_rows_of_very_different_size():
    """No scaling recorded: 1/sqrt(d_head) with d_head 4 (three queries, so the query count cannot pass for it)
    gives 1/2. Second case, scale 1, d_head 1: query 0 scores (1, 1.001), query 1 scores (1000, 1001) -> weights
    (1, e) / (1 + e) for query 1; each row is shifted by its own maximum, so exp never overflows or underflows."""
    import torch

    from explorer.model.capture import recompute
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 1, 3, 4, generator=g), torch.randn(1, 1, 3, 4, generator=g)
    scores, _ = recompute(dict(q=q, k=k, scaling=None, mask=None, bias=None))
    np.testing.assert_allclose(scores[0], (q[0, 0] @ k[0, 0].T * 0.5).numpy(), rtol=1e-6)
    q, k = torch.tensor([[[[0.001], [1.0]]]]), torch.tensor([[[[1000.0], [1001.0]]]])
    _, weights = recompute(dict(q=q, k=k, scaling=1.0, mask=None, bias=None))
    np.testing.assert_allclose(weights[0, 1], [1 / (1 + np.e), np.e / (1 + np.e)], rtol=1e-6)
    assert np.isfinite(weights).all()


def test_recompute_row_that_sees_nothing_is_zero():
    import torch

    from explorer.model.capture import recompute
    low = torch.finfo(torch.float32).min
    mask = torch.tensor([[[[low, low], [0.0, low]]]])  # query 0 may see no key, query 1 only key 0
    q = k = torch.ones(1, 1, 2, 2)
    _, weights = recompute(dict(q=q, k=k, scaling=None, mask=mask, bias=None))
    np.testing.assert_array_equal(weights[0], [[0.0, 0.0], [1.0, 0.0]])


class _PlainAttention:
    """A module from a file without its own eager_attention_forward: the wrapper falls back to Llama's."""
    num_key_value_groups = 1
    training = True


def test_capturing_eager_passes_dropout_through_and_records():
    import torch

    from explorer.model.capture import _capturing_eager, recording
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 1, 3, 2, generator=g) for _ in range(3))
    with recording() as records:
        out, w = _capturing_eager(_PlainAttention(), q, k, v, None, scaling=0.5)  # dropout defaults to 0
        _, dropped = _capturing_eager(_PlainAttention(), q, k, v, None, scaling=0.5, dropout=1.0)
    np.testing.assert_allclose(w[0, 0].numpy(), maths.softmax((q[0, 0] @ k[0, 0].T * 0.5).numpy()), rtol=1e-6)
    np.testing.assert_allclose(out[0, :, 0].numpy(), (w[0, 0] @ v[0, 0]).numpy(), rtol=1e-6)
    assert float(dropped.abs().sum()) == 0.0  # p = 1 while training drops every weight
    assert len(records) == 2 and records[0]["scaling"] == 0.5 and records[0]["bias"] is None
    assert torch.equal(records[0]["weights"], w) and torch.equal(records[0]["q"], q)


def test_enable_capture_registers_and_routes(tiny_loaded):
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    from explorer.model.capture import CAPTURE, enable_capture
    loaded = tiny_loaded("llama")
    for interface in (AttentionInterface, AttentionMaskInterface):
        interface._global_mapping.pop(CAPTURE, None)
    assert enable_capture(loaded.model) is True
    assert AttentionInterface._global_mapping[CAPTURE].__name__ == "_capturing_eager"
    assert CAPTURE in AttentionMaskInterface._global_mapping
    result = extract(loaded, TEXT)
    assert result.fidelity.max() < 1e-5 and np.all(np.triu(result.weights, 1) == 0)


@pytest.mark.parametrize("family", FAMILIES)
def test_one_heads_scores_rebuilt_alone_are_that_heads_scores(tiny_loaded, family):
    """A result keeps queries and keys, not scores: one head rebuilt alone (its own key head under grouped-query
    attention, its own slice of a position bias) equals that head of every head rebuilt together, and its softmax
    is the model's weights. Tolerance: float32 dot products of d_head = 8 terms of size ~1, a few ulps apart
    (1e-5); masked cells are -inf in both."""
    result = extract(tiny_loaded(family), TEXT)
    for part in {id(p): p for p in [result, *result.parts.values()]}.values():
        every = part.scores
        for layer in range(every.shape[0]):
            for head in range(every.shape[1]):
                alone = part.head_scores(layer, head)
                assert part.fidelity[layer, head] < 1e-5                # that head's fidelity, rebuilt alone
                np.testing.assert_allclose(alone, every[layer, head], atol=1e-5)
                np.testing.assert_allclose(maths.softmax(alone), part.weights[layer, head], atol=1e-5)


def test_fidelity_is_computed_a_head_at_a_time_and_finds_a_changed_weight(tiny_loaded, monkeypatch):
    """Reading one head's fidelity rebuilds that head alone; a weight moved by 0.25 shows as 0.25 in its own head
    and nowhere else (tolerance 1e-5: float32 softmax of 8-term dot products, a few ulps from the model's)."""
    from explorer.attention import result as attention

    result = extract(tiny_loaded("bert"), TEXT)
    tampered = np.array(result.weights)
    tampered[1, 2, 0, 0] += 0.25
    calls = []
    real = attention.recompute_tensors
    monkeypatch.setattr(attention, "recompute_tensors", lambda record: calls.append(record) or real(record))
    fidelity = attention.Fidelity(result.score_records, tampered)
    assert abs(fidelity[1, 2] - 0.25) < 1e-5
    assert len(calls) == 1 and calls[0]["q"].shape[1] == 1                 # one head…
    assert np.array_equal(calls[0]["q"], result.score_records[1]["q"][:, 2:3])   # …layer 1's head 2
    assert abs(fidelity[1, 2] - 0.25) < 1e-5 and len(calls) == 1           # read again: kept, not rebuilt
    every = np.asarray(fidelity)
    assert every.shape == (2, 4) and len(calls) == 3                       # then each layer whole, once
    assert abs(every[1, 2] - 0.25) < 1e-5 and np.delete(every.ravel(), 1 * 4 + 2).max() < 1e-5
    assert fidelity[0, 1] == every[0, 1] and len(calls) == 3               # a head of a layer already done


def test_a_copy_with_other_weights_keeps_the_models_fidelity(tiny_loaded):
    """The "weight × value size" view replaces the weights (effects.weighting); its fidelity badge still checks the
    model's own weights, not the replacement."""
    import dataclasses

    result = extract(tiny_loaded("bert"), TEXT)
    copy = dataclasses.replace(result, weights=np.full_like(result.weights, 0.5), score_records=None)
    assert copy.fidelity.max() < 1e-5
