"""Head statistics, matrix views and the flip analysis on hand-made matrices with known answers."""
import math

import numpy as np
import pytest

from explorer import analysis
from explorer.attention import AttentionResult, ModelFacts


def stack(*heads):
    return np.array([list(heads)], dtype=np.float32)  # [layer=1, head, q, k]


def test_head_stats_known_answers():
    n = 4
    identity, uniform, previous = np.eye(n), np.full((n, n), 1 / n), np.eye(n, k=-1)
    previous[0, 0] = 1.0
    stats = analysis.head_stats(stack(identity, uniform, previous)).set_index("head")
    assert stats.loc[0, "self"] == pytest.approx(1) and stats.loc[0, "entropy"] == pytest.approx(0)
    assert stats.loc[0, "mean_distance"] == pytest.approx(0) and stats.loc[0, "max_weight"] == pytest.approx(1)
    assert stats.loc[1, "entropy"] == pytest.approx(math.log(n)) and stats.loc[1, "max_weight"] == pytest.approx(0.25)
    # uniform over 4: mean |q-k| = (6+4+4+6)/16
    assert stats.loc[1, "mean_distance"] == pytest.approx(20 / 16)
    assert stats.loc[2, "previous_token"] == pytest.approx(1) and stats.loc[0, "previous_token"] == pytest.approx(0)
    assert stats.loc[2, "mean_distance"] == pytest.approx(3 / 4)
    # no special tokens: the sink is the first token
    assert stats.loc[2, "sink"] == pytest.approx(2 / 4) and stats.loc[1, "sink"] == pytest.approx(0.25)


def test_sink_counts_special_tokens():
    w = np.zeros((4, 4))
    w[:, 3] = 1
    stats = analysis.head_stats(stack(w), special=np.array([True, False, False, True]))
    assert stats.loc[0, "sink"] == pytest.approx(1)


def test_without_special_renormalises():
    w = np.array([[0.5, 0.25, 0.25], [0.2, 0.6, 0.2], [0.1, 0.1, 0.8]])
    kept, rows, cols = analysis.without_special(w, np.array([True, False, False]))
    assert rows.tolist() == [1, 2] and cols.tolist() == [1, 2]
    np.testing.assert_allclose(kept, [[0.75, 0.25], [1 / 9, 8 / 9]])


def test_group_matrix_merges_subtokens():
    w = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0]])
    merged = analysis.group_matrix(w, [-1, 0, 0], [-1, 0, 0])  # tokens 1, 2 are one word
    np.testing.assert_allclose(merged, [[0.1, 0.9], [0.4, 0.6]])
    assert analysis.group_labels(["[CLS]", "play", "##ing"], [-1, 0, 0], ["playing"]) == ["[CLS]", "playing"]


def test_rollout_of_identity_attention_is_identity():
    w = np.broadcast_to(np.eye(3), (2, 2, 3, 3))
    np.testing.assert_allclose(analysis.rollout(w), np.broadcast_to(np.eye(3), (2, 3, 3)))
    r = analysis.rollout(np.full((1, 1, 2, 2), 0.5))
    np.testing.assert_allclose(r[0], [[0.75, 0.25], [0.25, 0.75]])


def fake(text, weights, causal=False):
    words = text.split()
    facts = ModelFacts("fake", "decoder" if causal else "encoder", "x", 1, 1, 1, 4, 4, "learned", causal, "cpu")
    return AttentionResult(facts, text, "self", words, [hash(w) % 1000 for w in words], np.zeros(len(words), bool),
                           list(range(len(words))), words, np.asarray(weights, np.float32)[None, None])


def test_flip_detects_a_head_that_changes_its_mind():
    a = fake("animal street it tired", [[1, 0, 0, 0], [0, 1, 0, 0], [0.7, 0.1, 0.1, 0.1], [0, 0, 0, 1]])
    b = fake("animal street it wide", [[1, 0, 0, 0], [0, 1, 0, 0], [0.1, 0.6, 0.1, 0.2], [0, 0, 0, 1]])
    out = analysis.flip(a, b, "it", ["animal", "street"])
    row = out.table.iloc[0]
    assert out.query_sees_change and bool(row["flips"])
    assert row["A:animal"] == pytest.approx(0.7) and row["B:street"] == pytest.approx(0.6)
    assert row["flip"] == pytest.approx((0.7 - 0.1) - (0.1 - 0.6))


def test_flip_says_when_a_causal_query_cannot_see_the_change():
    w = np.tril(np.ones((4, 4)))
    w /= w.sum(-1, keepdims=True)
    a, b = fake("animal street it tired", w, causal=True), fake("animal street it wide", w, causal=True)
    out = analysis.flip(a, b, "it", ["animal", "street"])
    assert not out.query_sees_change and "causal" in out.message
    assert (out.table["flip"] == 0).all()


def test_flip_unknown_word_lists_the_words():
    a = fake("animal street it tired", np.eye(4))
    with pytest.raises(ValueError, match="animal, street, it, tired"):
        analysis.flip(a, a, "dog", ["animal", "street"])


def test_rollout_two_layers_by_hand():
    """Two layers, two heads, two tokens, residual 0.5, worked by hand.

    Layer 0 heads [[1,0],[1,0]] and [[1,0],[0,1]] average to [[1,0],[.5,.5]]; with the residual the step is
    [[1,0],[.25,.75]]. Layer 1's heads both look at token 1: step [[.5,.5],[0,1]]. Rollout after layer 1 is
    step1 @ step0 = [[.625,.375],[.25,.75]]: the other order, step0 @ step1, gives [[.5,.5],[.125,.875]], and
    reusing layer 0's heads gives [[1,0],[.4375,.5625]].
    """
    w = np.array([[[[1, 0], [1, 0]], [[1, 0], [0, 1]]],
                  [[[0, 1], [0, 1]], [[0, 1], [0, 1]]]], dtype=float)   # [layer, head, query, key]
    out = analysis.rollout(w, residual=0.5)
    np.testing.assert_allclose(out[0], [[1, 0], [0.25, 0.75]])
    np.testing.assert_allclose(out[1], [[0.625, 0.375], [0.25, 0.75]])
    # residual 0.25: step0 = [[1,0],[3/8,5/8]], step1 = [[1/4,3/4],[0,1]] -> step1 @ step0 = [[17/32,15/32],[3/8,5/8]]
    np.testing.assert_allclose(analysis.rollout(w, residual=0.25)[1], [[17 / 32, 15 / 32], [3 / 8, 5 / 8]])
