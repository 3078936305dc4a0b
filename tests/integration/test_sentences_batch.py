"""The class's sentences in one padded batch: each sentence's weights equal its own single forward, on both
embedded models (the encoder pads keys it must mask; the decoder's padding comes after every real token, and its
positions stay 0..n-1)."""
import numpy as np
import pytest

from explorer.attention.result import extract
from explorer.sentences.batch import class_attention

SENTENCES = [   # lengths differ a lot, so most rows carry padding
    "It rained.",
    "The animal didn't cross the street because it was too tired.",
    "The trophy would not fit in the brown suitcase because it was too big, said the man who carried it home.",
    "Sie sagte, es sei zu spät.",
    "The 🐱 sat because it was tired",
]


@pytest.mark.parametrize("which", ["encoder", "decoder"])
def test_each_sentence_in_the_batch_equals_its_own_forward(which, request):
    loaded = request.getfixturevalue(which)
    batch = class_attention(loaded, SENTENCES)
    lengths = {w.shape[-1] for w in batch.weights}
    assert len(lengths) == len(SENTENCES)   # padded: every length differs
    for i, text in enumerate(SENTENCES):
        alone = extract(loaded, text)
        assert list(batch.tokens[i]) == list(alone.tokens)
        assert batch.weights[i].shape == alone.weights.shape
        np.testing.assert_allclose(batch.weights[i], alone.weights, rtol=0, atol=1e-5)
        np.testing.assert_allclose(batch.weights[i].sum(-1), 1, atol=1e-5)   # nothing went to the padding
    assert batch.causal == (which == "decoder")
    if batch.causal:
        assert all(np.all(np.triu(w, k=1) == 0) for w in batch.weights)


@pytest.mark.parametrize("which", ["encoder", "decoder"])
def test_a_batch_that_stops_after_the_shown_layer_equals_the_full_forwards_layers(which, request):
    """``up_to``: the pass runs the first blocks only; the layers it holds equal a single forward's, and the model
    has every block back afterwards."""
    from explorer.model import anatomy

    loaded = request.getfixturevalue(which)
    total = len(anatomy.blocks(loaded.model))
    layer = 2
    batch = class_attention(loaded, SENTENCES[:3], up_to=layer)
    assert batch.n_layers == layer + 1 < total
    assert len(anatomy.blocks(loaded.model)) == total
    for i, text in enumerate(SENTENCES[:3]):
        np.testing.assert_allclose(batch.weights[i], extract(loaded, text).weights[:layer + 1], rtol=0, atol=1e-5)
    assert class_attention(loaded, SENTENCES[:1], up_to=total + 5).n_layers == total   # clamped to the last
