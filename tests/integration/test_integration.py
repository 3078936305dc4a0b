"""The two embedded real models, end to end: fidelity, the antecedent flip, the causal lesson."""
import numpy as np

from explorer.attention.analysis import flip, head_stats
from explorer.attention.result import extract
from explorer.examples import ANIMAL_TIRED, ANIMAL_WIDE


def test_encoder_facts_and_fidelity(encoder):
    result = extract(encoder, ANIMAL_TIRED)
    f = result.facts
    assert (f.kind, f.family, f.n_layers, f.n_heads, f.position, f.causal) == ("encoder", "bert", 6, 12, "learned",
                                                                                 False)
    assert result.tokens[:3] == ["[CLS]", "the", "animal"]
    assert result.fidelity.shape == (6, 12) and result.fidelity.max() < 1e-5
    np.testing.assert_allclose(result.weights.sum(-1), 1, atol=1e-5)


def test_decoder_facts_fidelity_and_causality(decoder):
    result = extract(decoder, ANIMAL_TIRED)
    f = result.facts
    assert (f.family, f.n_layers, f.n_heads, f.n_kv_heads, f.d_head, f.position) == ("llama", 30, 9, 3, 64, "rope")
    assert result.fidelity.shape == (30, 9) and result.fidelity.max() < 1e-5
    assert np.all(np.triu(result.weights, k=1) == 0)


def test_decoder_weights_are_the_real_model(decoder):
    """Guards the GGUF → safetensors conversion: a real model predicts the obvious next word."""
    import torch
    tok = decoder.tokenizer
    ids = tok("The capital of France is", return_tensors="pt")
    with torch.inference_mode():
        hidden = decoder.model(**ids).last_hidden_state[0, -1]
        logits = hidden @ decoder.model.embed_tokens.weight.T  # tied output layer
    assert tok.decode([int(logits.argmax())]).strip() == "Paris"


def test_encoder_has_a_head_where_it_flips_from_animal_to_street(encoder):
    out = flip(extract(encoder, ANIMAL_TIRED), extract(encoder, ANIMAL_WIDE), "it", ["animal", "street"])
    assert out.query_sees_change
    flipped = out.table[out.table["flips"]]
    assert len(flipped) >= 1
    best = flipped.sort_values("flip").iloc[-1]
    assert best["A:animal"] > best["A:street"] and best["B:street"] > best["B:animal"]


def test_decoder_reports_that_it_cannot_see_the_adjective(decoder):
    a, b = extract(decoder, ANIMAL_TIRED), extract(decoder, ANIMAL_WIDE)
    out = flip(a, b, "it", ["animal", "street"])
    assert not out.query_sees_change and "causal" in out.message
    it = a.tokens.index("it")
    np.testing.assert_array_equal(a.weights[:, :, it, : it + 1], b.weights[:, :, it, : it + 1])


def test_head_stats_cover_every_head(encoder):
    stats = head_stats(extract(encoder, ANIMAL_TIRED).weights)
    assert len(stats) == 72 and stats["entropy"].between(0, np.log(16) + 1e-6).all()
