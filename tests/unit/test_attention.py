"""Extraction on tiny random models of every family, through the same loading code the app uses."""
import numpy as np
import pytest
from conftest import FAMILIES
from tiny import TEXT

from explorer import maths
from explorer.attention import extract


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

    from explorer.capture import recompute
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


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_is_refused_clearly(tiny_loaded, text):
    with pytest.raises(ValueError, match="empty"):
        extract(tiny_loaded("bert"), text)


def test_missing_attentions_raise_helpful_error():
    from explorer.attention import _stack
    with pytest.raises(RuntimeError, match="eager"):
        _stack((), 6, "self")
