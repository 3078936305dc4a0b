"""Head geometry: the alignment that leaves attention alone (by hand), projections on constructed heads, and the
corpus pass on tiny random models of every family."""
from types import SimpleNamespace

import numpy as np
import pytest
from tiny import TEXT

from explorer import maths
from explorer.attention.result import extract
from explorer.geometry import align as al
from explorer.geometry import lab, maps, project
from explorer.geometry.corpus_pass import GeometryUnavailable, run_pass

# ---------------------------------------------------------------------------------------------- the alignment by hand

Q = np.array([[1.0, 0.0], [0.0, 2.0]])                 # two queries, d = 2
K = np.array([[3.0, 1.0], [5.0, 1.0], [4.0, 4.0]])     # three keys, centred at (4, 2)


def test_key_shift_adds_one_constant_per_query_and_leaves_softmax():
    q2, k2, info = al.align(Q, K)
    np.testing.assert_allclose(info.shift, [0.5 - 4.0, 1.0 - 2.0])          # mean(q) − mean(k) = (−3.5, −1)
    shifted = K + info.shift
    np.testing.assert_allclose(shifted.mean(0), Q.mean(0))                  # both clouds share a centre
    before, after = Q @ K.T, Q @ shifted.T
    # query 0 (1, 0): every score moves by q·shift = −3.5; query 1 (0, 2): by −2
    np.testing.assert_allclose(after - before, [[-3.5] * 3, [-2.0] * 3])
    np.testing.assert_allclose(maths.softmax(after), maths.softmax(before), atol=1e-15)


def test_scale_leaves_every_dot_product_and_equalises_lengths():
    q2, k2, info = al.align(Q, K)
    shifted = K + info.shift
    np.testing.assert_allclose(q2 @ k2.T, Q @ shifted.T, atol=1e-12)        # (c q)·(k / c) = q·k, each pair
    # mean |q| = (1 + 2) / 2 = 1.5; after scaling both means are equal
    assert info.query_norm[0] == pytest.approx(1.5)
    assert np.linalg.norm(q2, axis=1).mean() == pytest.approx(np.linalg.norm(k2, axis=1).mean())
    assert info.query_norm[1] == pytest.approx(info.key_norm[1])
    assert info.scale == pytest.approx(np.sqrt(np.linalg.norm(shifted, axis=1).mean() / 1.5))


def test_weight_change_is_zero_for_the_alignment_and_catches_a_real_change():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(12, 4)), rng.normal(size=(12, 4)) * 3 + 5       # two sentences of 5 and 7 tokens
    starts = np.array([0, 5, 12])
    q2, k2, _ = al.align(q, k)
    for causal in (False, True):
        assert al.weight_change(q, k, q2, k2, starts, 0.5, causal) <= 1e-12
    # a shift that differs per key is not harmless: the check must see it
    assert al.weight_change(q, k, q, k + rng.normal(size=k.shape), starts, 0.5, False) > 1e-2


# ---------------------------------------------------------------------------------------------- projections

def position_head(n: int = 16):
    """Queries and keys that encode position only: points on a quarter circle (angle ∝ position) in 2 of 8
    dimensions, centred and rotated at random; each key is its query three times larger and moved far away (as
    in a real head, the two clouds lie apart): the shift and the scale bring every key back onto its query."""
    rng = np.random.default_rng(1)
    angle = np.arange(n) * (np.pi / 2) / n
    base = np.zeros((n, 8))
    base[:, 0], base[:, 1] = np.cos(angle), np.sin(angle)
    rotation, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    q = (base - base.mean(axis=0)) @ rotation
    return q, q * 3 + rng.normal(size=8) * 4


def test_pca_map_of_a_position_only_head_orders_points_by_position():
    q, k = position_head()
    q2, k2, _ = al.align(q, k)
    xy = project.pca(np.concatenate([q2, k2]))
    n = len(q)
    order = np.argsort(xy[:n, 0])
    assert order.tolist() in (list(range(n)), list(range(n))[::-1])         # queries along x, by position
    np.testing.assert_allclose(xy[:n], xy[n:], atol=1e-9)                   # each query on its own key


def test_tsne_map_of_a_position_only_head_keeps_neighbours_by_position():
    q, k = position_head(40)
    q2, k2, _ = al.align(q, k)
    xy = project.tsne(np.concatenate([q2, k2]))
    n = len(q)
    assert xy.shape == (2 * n, 2) and np.isfinite(xy).all()
    dist = np.linalg.norm(xy[:n, None] - xy[None, n:], axis=-1)             # query × key in the map
    nearest = dist.argmin(axis=1)
    assert np.abs(nearest - np.arange(n)).max() <= 2                         # a query's nearest key: its position ± 2


def test_pca_signs_are_fixed_and_unknown_method_is_named():
    q, _ = position_head()
    np.testing.assert_array_equal(project.pca(q), project.pca(q.copy()))
    with pytest.raises(ValueError, match="pca, tsne"):
        project.project(q, "umap")


# ---------------------------------------------------------------------------------------------- the corpus pass

SENTENCES = (TEXT, "the cat sat on the mat .", "a dog bites man", "the cat", "the dog sat on the mat because "
             "it was tired .")


@pytest.fixture(scope="module")
def passes(tiny_corpus_pass):
    return lambda family: tiny_corpus_pass(family, SENTENCES)


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_pass_holds_the_queries_and_keys_the_model_multiplies(tiny_loaded, passes, family):
    run = passes(family)
    facts = run.facts
    n = sum(len(extract(tiny_loaded(family), s).tokens) for s in SENTENCES)
    assert run.queries.shape == (2, 4, n, facts.d_head) and run.queries.dtype == np.float16
    assert run.keys.shape == (2, facts.n_kv_heads, n, facts.d_head)
    assert run.nbytes == n * 2 * (4 + facts.n_kv_heads) * facts.d_head * 2
    assert run.fidelity < 1e-5                                              # our recompute = the model, every layer
    for s, text in enumerate(SENTENCES):                                    # padded batches = each sentence alone
        result = extract(tiny_loaded(family), text)
        a, b = run.starts[s], run.starts[s + 1]
        assert run.tokens[a:b] == result.tokens
        for layer in range(2):
            for head in range(4):
                q, k = run.head_qk(layer, head)
                ours = al.sentence_weights(q[a:b], k[a:b], float(run.scaling[layer]), facts.causal)
                bound = al.float16_bound(q[a:b], k[a:b], float(run.scaling[layer]))
                assert np.abs(ours - result.weights[layer, head]).max() <= bound


def test_grouped_query_heads_share_their_key_head(passes):
    run = passes("llama")                                                   # 4 query heads, 2 key/value heads
    assert [run.kv_head(h) for h in range(4)] == [0, 0, 1, 1]
    np.testing.assert_array_equal(run.head_qk(1, 2)[1], run.head_qk(1, 3)[1])


def test_previous_and_first_token_means(tiny_loaded, passes):
    run = passes("gpt2")
    prev = np.zeros((2, 4))
    count = 0
    for text in SENTENCES:
        w = extract(tiny_loaded("gpt2"), text).weights
        t = w.shape[-1]
        prev += w[:, :, np.arange(1, t), np.arange(t - 1)].sum(-1)
        count += t - 1
    np.testing.assert_allclose(run.previous, prev / count, atol=1e-6)


def test_head_map_is_aligned_unchanged_and_clickable(passes):
    run = passes("bert")
    m = maps.head_map(run, 1, 2, "pca")
    assert m.xy.shape == (2 * run.n_points, 2) and m.max_change <= 1e-6
    top = maps.top_keys(run, 1, 2, point=3, top=3, least=0.0)
    assert len(maps.top_keys(run, 1, 2, point=3, top=3, least=1.0)) == 1           # the largest is always kept
    q, k = run.head_qk(1, 2)
    a, b = run.starts[0], run.starts[1]
    row = al.sentence_weights(q[a:b], k[a:b], float(run.scaling[1]), False)[3]
    assert [i for i, _ in top] == list(np.argsort(-row)[:3]) and top[0][1] == pytest.approx(row.max())
    assert maps.context(run, 3, around=1) == "... animal [didn] ' ..."


def test_causal_top_keys_never_look_ahead(passes):
    run = passes("llama")
    s = 1
    for point in range(run.starts[s], run.starts[s + 1]):
        assert all(i <= point for i, _ in maps.top_keys(run, 0, 1, point, top=10))


def test_encoder_decoder_and_over_budget_are_named(tiny_loaded):
    with pytest.raises(GeometryUnavailable, match="not support its attention yet"):
        run_pass(tiny_loaded("t5"), SENTENCES)
    with pytest.raises(GeometryUnavailable, match=r"too large .* budget is 0 MB"):
        run_pass(tiny_loaded("bert"), SENTENCES, budget_mb=0)


def test_lab_question_answers_with_the_strongest_previous_token_head():
    previous = np.array([[0.1, 0.2, 0.05], [0.9, 0.3, 0.0]])
    first = np.array([[0.8, 0.1, 0.1], [0.0, 0.1, 0.2]])
    run = SimpleNamespace(previous=previous, first=first, facts=SimpleNamespace(name="m"))
    heads, answer = lab.candidate_heads(run)
    assert answer == (1, 0) and len(set(heads)) == 4
    assert set(heads) == {(1, 0), (0, 0), (1, 2), (0, 2)}                   # answer, sink, two that look back least
    question, shown = lab.previous_token_question(run)
    assert shown == heads and question.correct == f"Map {'ABCD'[heads.index((1, 0))]}"
    assert "0.90" in question.reveal
