"""Head geometry on the embedded models: the corpus pass holds the queries and keys the model multiplies (its own
weights come back from them), the alignment changes no weight, and the strongest previous-token head behaves as
one in its map."""
import numpy as np
import pytest

from explorer.attention.result import extract
from explorer.geometry import align as al
from explorer.geometry import lab, maps
from explorer.geometry.corpus import SENTENCES
from explorer.geometry.corpus_pass import estimate_bytes, run_pass


@pytest.fixture(scope="module")
def encoder_pass(encoder):
    return run_pass(encoder)


def test_encoder_pass_reproduces_the_models_weights(encoder, encoder_pass):
    run = encoder_pass
    assert len(run.sentences) == len(SENTENCES) == 200 and run.n_points > 2000
    assert run.queries.shape == (6, 12, run.n_points, 32) == run.keys.shape
    assert run.nbytes == estimate_bytes(run.facts, run.n_points) < 30 * 2**20     # the stated 24 MB
    assert run.fidelity < 1e-5
    for s in (0, 137):                                                           # a plain and a repeated-phrase one
        result = extract(encoder, SENTENCES[s])
        a, b = run.starts[s], run.starts[s + 1]
        assert run.tokens[a:b] == result.tokens
        for layer, head in ((0, 2), (3, 7), (5, 11)):
            q, k = run.head_qk(layer, head)
            ours = al.sentence_weights(q[a:b], k[a:b], float(run.scaling[layer]), False)
            assert np.abs(ours - result.weights[layer, head]).max() <= al.float16_bound(q[a:b], k[a:b],
                                                                                      float(run.scaling[layer]))


def test_previous_token_head_in_its_map(encoder_pass):
    run = encoder_pass
    question, heads = lab.previous_token_question(run)
    layer, head = heads[question.options.index(question.correct)]
    assert run.previous[layer, head] > 0.5
    m = maps.head_map(run, layer, head, "pca")
    assert m.max_change <= 1e-6
    # a query's top key is the token before it for most queries of the corpus
    points = [p for p in range(0, run.n_points, 7) if run.position[p] > 0]
    hits = [maps.top_keys(run, layer, head, p, top=1)[0][0] == p - 1 for p in points]
    assert np.mean(hits) > 0.5


@pytest.mark.slow
def test_decoder_pass_maps_grouped_query_heads_after_rope(decoder):
    run = run_pass(decoder, SENTENCES[:24])
    assert run.facts.position == "rope" and run.facts.causal
    assert run.queries.shape[:2] == (30, 9) and run.keys.shape[:2] == (30, 3)
    assert [run.kv_head(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert run.fidelity < 1e-5
    result = extract(decoder, SENTENCES[5])
    a, b = run.starts[5], run.starts[6]
    for layer, head in ((0, 4), (14, 8), (29, 0)):
        q, k = run.head_qk(layer, head)
        ours = al.sentence_weights(q[a:b], k[a:b], float(run.scaling[layer]), True)
        assert np.abs(ours - result.weights[layer, head]).max() <= al.float16_bound(q[a:b], k[a:b],
                                                                                  float(run.scaling[layer]))


def test_a_corpus_sentence_typed_as_the_text_lands_on_its_own_points(encoder, encoder_pass):
    """The overlay on the real encoder: sentence 137 typed alone (no padded batch) is placed where the corpus map
    drew it, up to one float16 step of each stored coordinate (2⁻¹⁰ of it, times the alignment's scale; projecting
    on orthonormal directions never lengthens a difference) and float32 rounding of the map."""
    from explorer.geometry import overlay
    run, s = encoder_pass, 137
    a, b = int(run.starts[s]), int(run.starts[s + 1])
    typed = overlay.text_pass(encoder, SENTENCES[s]).run
    assert typed.tokens == run.tokens[a:b]
    hm = maps.head_map(run, 3, 7, "pca")
    q, k = typed.head_qk(3, 7)
    bound = 2.0 ** -10 * np.concatenate([np.linalg.norm(q, axis=1) * hm.alignment.scale,
                                         np.linalg.norm(k, axis=1) / hm.alignment.scale]) \
        + 2 * 2.0 ** -24 * np.abs(hm.xy).max()
    corpus = np.concatenate([hm.xy[a:b], hm.xy[run.n_points + a:run.n_points + b]])
    assert (np.linalg.norm(overlay.place(typed, hm) - corpus, axis=1) <= bound).all()
