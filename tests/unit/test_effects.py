"""Head knockout on tiny random models: hooks change exactly one head's slice, the batched sweep equals the slow
one, and the measures match the full causal LM's own logits."""
import numpy as np
import pytest
import torch
from tiny import TEXT

from explorer.heads_do import knockout
from explorer.heads_do.measures import make_probe

A, B = TEXT, TEXT.replace("tired", "wide")
FAMILIES = ["bert", "gpt2", "llama"]


def _inputs(loaded, text=A):
    return {k: v for k, v in loaded.tokenizer(text, return_tensors="pt").items()
            if k in {"input_ids", "attention_mask", "token_type_ids"}}


def _hidden(loaded, text=A):
    with torch.inference_mode():
        return loaded.model(**_inputs(loaded, text), use_cache=False).last_hidden_state


def _apply(proj, x):
    """The projection written out: Linear is x Wᵀ + b, GPT-2's Conv1D is x W + b."""
    w = proj.weight
    y = x @ (w.T if isinstance(proj, torch.nn.Linear) else w)
    return y if proj.bias is None else y + proj.bias


def _record(proj, store):
    """A pre-hook recording the projection's input and a forward hook recording its output."""
    return [proj.register_forward_pre_hook(lambda m, a: store.__setitem__("in", a[0].clone())),
            proj.register_forward_hook(lambda m, a, o: store.__setitem__("out", o.clone()))]


@pytest.mark.parametrize("family", FAMILIES)
def test_knocking_out_nothing_changes_nothing(tiny_loaded, family):
    loaded = tiny_loaded(family)
    plain = _hidden(loaded)
    with knockout.knockout(loaded.model, {}):
        assert torch.equal(_hidden(loaded), plain)
    with knockout.knockout(loaded.model, {0: [], 1: []}, mode="mean", means=torch.zeros(2, 32)):
        assert torch.equal(_hidden(loaded), plain)
    with knockout.knockout(loaded.model, {1: [0]}):
        assert not torch.equal(_hidden(loaded), plain)
    assert torch.equal(_hidden(loaded), plain)   # hooks are gone after the block


@pytest.mark.parametrize("family", FAMILIES)
def test_knocked_out_head_is_its_slice_zeroed(tiny_loaded, family):
    loaded = tiny_loaded(family)
    _, projs = knockout.attention_layers(loaded.model)
    clean, before, after = {}, {}, {}
    handles = _record(projs[1], clean)
    _hidden(loaded)
    for h in handles:
        h.remove()
    handles = _record(projs[1], before)            # registered first: sees the input before the knockout
    try:
        with knockout.knockout(loaded.model, {1: [2]}):
            inner = _record(projs[1], after)        # registered after the knockout hook: sees what the head gets
            _hidden(loaded)
            for h in inner:
                h.remove()
    finally:
        for h in handles:
            h.remove()
    d = 32 // 4
    assert torch.equal(before["in"], clean["in"])   # layer 0 untouched, so layer 1's heads compute the same
    expected = clean["in"].clone()
    expected[..., 2 * d:3 * d] = 0
    assert torch.equal(after["in"], expected)       # head 2's columns are 0, every other column unchanged
    assert torch.allclose(before["out"], _apply(projs[1], expected), atol=1e-6)


@pytest.mark.parametrize("family", FAMILIES)
def test_whole_layer_out_leaves_only_the_bias(tiny_loaded, family):
    loaded = tiny_loaded(family)
    _, projs = knockout.attention_layers(loaded.model)
    seen = {}
    with knockout.knockout(loaded.model, {0: [0, 1, 2, 3]}):
        handles = _record(projs[0], seen)
        _hidden(loaded)
        for h in handles:
            h.remove()
    bias = projs[0].bias if projs[0].bias is not None else torch.zeros(32)
    assert torch.equal(seen["out"], bias.expand_as(seen["out"]))
    assert (family == "llama") == (projs[0].bias is None)


@pytest.mark.parametrize("family", FAMILIES)
def test_mean_knockout_puts_the_reference_mean_in_the_slice(tiny_loaded, family):
    loaded = tiny_loaded(family)
    _, projs = knockout.attention_layers(loaded.model)
    means = knockout.head_means(loaded, [A, B])
    assert means.shape == (2, 32)
    clean, after = {}, {}
    handles = _record(projs[0], clean)
    make = make_probe(loaded, A)
    with torch.inference_mode():
        loaded.model(**make.inputs, use_cache=False)
    for h in handles:
        h.remove()
    with knockout.knockout(loaded.model, {0: [1]}, mode="mean", means=means):
        handles = _record(projs[0], after)
        with torch.inference_mode():
            loaded.model(**make.inputs, use_cache=False)
        for h in handles:
            h.remove()
    assert torch.equal(after["in"][..., 8:16], means[0, 8:16].expand(*after["in"].shape[:2], 8))
    assert torch.equal(after["in"][..., :8], clean["in"][..., :8])
    assert torch.equal(after["in"][..., 16:], clean["in"][..., 16:])


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_batched_sweep_equals_one_head_at_a_time(tiny_loaded, family, mode):
    loaded = tiny_loaded(family)
    seen = []
    fast = knockout.sweep(loaded, A, B, mode=mode, max_rows=3, progress=lambda f, m: seen.append(f))
    means = knockout.head_means(loaded, [A, B]) if mode == "mean" else None
    slow_a, slow_b = np.zeros((2, 4)), np.zeros((2, 4))
    for layer in range(2):
        for head in range(4):
            with knockout.knockout(loaded.model, {layer: [head]}, mode=mode, means=means):
                slow_a[layer, head] = knockout.measure(loaded, A).score
                slow_b[layer, head] = knockout.measure(loaded, B).score
    np.testing.assert_allclose(fast.score_a, slow_a, atol=1e-5)
    np.testing.assert_allclose(fast.score_b, slow_b, atol=1e-5)
    base = knockout.measure_pair(loaded, A, B)
    assert fast.base.shift == pytest.approx(base.shift, abs=1e-6)
    np.testing.assert_allclose(fast.effect, (slow_a - slow_b) - base.shift, atol=1e-5)
    assert np.abs(fast.effect).max() > 0                       # some head matters
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 4


@pytest.mark.parametrize("family", ["gpt2", "llama"])   # gpt2 ties its head to the embedding, llama does not
def test_decoder_measure_matches_the_full_language_model(tiny_loaded, tiny_folder, family):
    from transformers import AutoModelForCausalLM
    loaded = tiny_loaded(family)
    assert loaded.model.config.tie_word_embeddings == (family == "gpt2")
    full = AutoModelForCausalLM.from_pretrained(tiny_folder(family), dtype=torch.float32).eval()
    m = knockout.measure(loaded, A, candidates=("animal", "street"))
    ids = loaded.tokenizer(m.prompt, return_tensors="pt")["input_ids"]
    assert m.prompt == A + ' The word "it" refers to the'
    with torch.no_grad():
        logp = torch.log_softmax(full(ids).logits[0, -1].double(), -1)
    vocab = loaded.tokenizer.get_vocab()
    assert m.values["animal"] == pytest.approx(logp[vocab["animal"]].exp().item(), rel=1e-5)
    assert m.values["street"] == pytest.approx(logp[vocab["street"]].exp().item(), rel=1e-5)
    assert m.score == pytest.approx((logp[vocab["animal"]] - logp[vocab["street"]]).item(), abs=1e-5)
    assert m.kind == "next-token" and not m.notes


def test_several_token_candidate_uses_its_first_token(tiny_loaded):
    loaded = tiny_loaded("gpt2")
    m = knockout.measure(loaded, A, candidates=("animal street", "man"))
    plain = knockout.measure(loaded, A, candidates=("animal", "man"))
    assert m.values["animal street"] == plain.values["animal"]
    assert "2 tokens" in m.notes[0] and "first token" in m.notes[0]
    with pytest.raises(ValueError, match="same token"):
        knockout.measure(loaded, A, candidates=("animal", "animal street"))


def test_encoder_measure_is_a_cosine_difference(tiny_loaded):
    loaded = tiny_loaded("bert")
    m = knockout.measure(loaded, A)
    h = _hidden(loaded)[0].double()           # [CLS] the animal didn't … : word-level, one token per word
    tokens = loaded.tokenizer.convert_ids_to_tokens(_inputs(loaded)["input_ids"][0])
    it, animal, street = tokens.index("it"), tokens.index("animal"), tokens.index("street")
    cos = torch.nn.functional.cosine_similarity
    assert m.values["animal"] == pytest.approx(cos(h[it], h[animal], dim=0).item(), abs=1e-9)
    assert m.values["street"] == pytest.approx(cos(h[it], h[street], dim=0).item(), abs=1e-9)
    assert m.score == pytest.approx(m.values["animal"] - m.values["street"], abs=1e-12)
    pair = knockout.measure_pair(loaded, A, B)
    assert pair.shift == pytest.approx(pair.a.score - pair.b.score)
    assert "both texts" in pair.notes[0] or "in A" in pair.notes[0]


def test_rank_and_spearman_hand_computed():
    np.testing.assert_array_equal(knockout.rank([10, 20, 20, 5]), [2, 3.5, 3.5, 1])
    # ranks x = 1, 2.5, 2.5, 4 and y = 1, 3, 2, 4: Σdxdy = 4.5, Σdx² = 4.5, Σdy² = 5 → 4.5 / √22.5
    assert knockout.spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(4.5 / np.sqrt(22.5))
    assert knockout.spearman(np.array([[1, 2], [3, 4]]), np.array([[1, 8], [27, 64]])) == pytest.approx(1.0)
    assert knockout.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert knockout.spearman([1, 2, np.nan, 4], [2, 4, 0, 8]) == pytest.approx(1.0)
    assert np.isnan(knockout.spearman([1, 1, 1], [1, 2, 3]))
    # sizes: heads that help have negative effects; the largest flips with the largest effects read as +1, not −1
    assert knockout.size_spearman([0.1, 0.5, -0.9], [-0.2, -1.0, 3.0]) == pytest.approx(1.0)
    assert knockout.spearman([0.1, 0.5, 0.9], [-0.2, -1.0, -3.0]) == pytest.approx(-1.0)


def test_flip_map_reshapes_the_flip_column():
    import pandas as pd
    table = pd.DataFrame({"layer": [0, 0, 1, 1], "head": [0, 1, 0, 1], "flip": [0.1, -0.2, 0.3, 0.0]})
    np.testing.assert_array_equal(knockout.flip_map(table), [[0.1, -0.2], [0.3, 0.0]])


def test_bad_mode_and_missing_means_are_explained(tiny_loaded):
    loaded = tiny_loaded("gpt2")
    with pytest.raises(ValueError, match="means"), knockout.knockout(loaded.model, {0: [1]}, mode="mean"):
        pass
    with pytest.raises(ValueError, match="mode"):
        knockout.sweep(loaded, A, B, mode="resample")
