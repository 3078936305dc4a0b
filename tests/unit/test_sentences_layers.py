"""A class's batch that stops after the shown layer (``class_attention(up_to=…)``, ``cut.first_blocks``): the
layers it holds equal a full pass's, the model keeps every block, and a full pass after a stopped first one still
records every layer (transformers 5 hooks the blocks present at a model's first call)."""
import numpy as np
import pytest

from explorer.model import anatomy, cut
from explorer.model.loading import load_model
from explorer.sentences.batch import class_attention

SENTENCES = ["the dog bites the man .", "it was too tired", "the cat sat on the mat because it was wide ."]


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_a_stopped_batch_first_then_a_full_one(family, tiny_folder):
    loaded = load_model(str(tiny_folder(family)), device="cpu")   # fresh: no pass has run on it yet
    stopped = class_attention(loaded, SENTENCES, up_to=0)
    assert stopped.n_layers == 1 and len(anatomy.blocks(loaded.model)) == 2
    full = class_attention(loaded, SENTENCES)
    assert full.n_layers == 2
    for short, whole in zip(stopped.weights, full.weights):
        np.testing.assert_allclose(short, whole[:1], rtol=0, atol=1e-6)
    assert class_attention(loaded, SENTENCES[:1], up_to=-3).n_layers == 1   # clamped to layer 0


def test_first_blocks_gives_the_same_modules_back_even_when_the_pass_fails(tiny_folder):
    loaded = load_model(str(tiny_folder("bert")), device="cpu")
    before = list(anatomy.blocks(loaded.model))
    with pytest.raises(RuntimeError), cut.first_blocks(loaded.model, 1) as ran:
        assert ran == 1 and len(loaded.model.encoder.layer) == 1   # what the forward pass runs
        assert list(anatomy.blocks(loaded.model)) == before   # what any other reader (outside the lock) sees
        raise RuntimeError("the pass failed")
    assert list(anatomy.blocks(loaded.model)) == before and list(loaded.model.encoder.layer) == before
    with cut.first_blocks(loaded.model, 5) as ran:   # not fewer than it has: every block
        assert ran == 2 and list(anatomy.blocks(loaded.model)) == before
