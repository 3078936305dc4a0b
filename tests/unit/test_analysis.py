"""Head statistics, matrix views and the flip analysis on hand-made matrices with known answers."""
import math

import numpy as np
import pytest

from explorer.attention import analysis
from explorer.attention.result import AttentionResult, ModelFacts


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


# ------------------------------------------------------------------------------- more worked by hand
def test_head_stats_of_one_query_over_three_keys():
    """Cross attention has fewer queries than keys: one query, weights (0.2, 0.3, 0.5) on keys 0, 1, 2.

    mean_distance = 0.3*1 + 0.5*2 = 1.3 (summed over keys, not over queries); max_weight = 0.5; self = 0.2
    (query 0 on key 0); previous_token = 0 (a single query has no previous key); sink = key 0 = 0.2.
    """
    w = np.array([[[[0.2, 0.3, 0.5]]]], dtype=np.float32)
    stats = analysis.head_stat_arrays(w)
    assert stats.dtype == np.float32 and stats.shape == (1, 1, 6)
    np.testing.assert_allclose(stats[0, 0], [analysis.maths.entropy([0.2, 0.3, 0.5]), 0.5, 1.3, 0.2, 0.0, 0.2],
                               rtol=1e-6)


def test_head_stats_of_two_tokens_and_no_special_token_marked():
    """w = [[1, 0], [0.4, 0.6]]: previous_token is query 1's weight on key 0 = 0.4 (two tokens are enough);
    special all False counts as "none": the sink is token 0, (1 + 0.4) / 2 = 0.7."""
    w = np.array([[[[1.0, 0.0], [0.4, 0.6]]]])
    stats = analysis.head_stats(w, special=np.array([False, False])).iloc[0]
    assert stats["previous_token"] == pytest.approx(0.4) and stats["sink"] == pytest.approx(0.7)
    assert stats["self"] == pytest.approx(0.8) and stats["mean_distance"] == pytest.approx(0.2)


def test_head_stats_rows_are_layer_major():
    w = np.broadcast_to(np.eye(2), (2, 2, 2, 2))  # 2 layers x 2 heads
    stats = analysis.head_stats(w)
    assert stats["layer"].tolist() == [0, 0, 1, 1] and stats["head"].tolist() == [0, 1, 0, 1]


def test_without_special_leaves_a_row_that_only_saw_special_tokens_at_zero():
    # row 1 puts everything on [CLS] (dropped): nothing is left to renormalise, so it stays 0 (not 0/0 = nan)
    w = np.array([[0.5, 0.25, 0.25], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8]])
    kept, _, _ = analysis.without_special(w, np.array([True, False, False]))
    np.testing.assert_array_equal(kept[0], [0.0, 0.0])
    np.testing.assert_allclose(kept[1], [1 / 9, 8 / 9])


def test_group_matrix_on_a_stack_of_layers():
    w = np.array([[[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0]],
                  [[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.2, 0.2, 0.6]]])  # (layer 2, query 3, key 3)
    merged = analysis.group_matrix(w, [-1, 0, 0], [-1, 0, 0])
    # layer 1: row [CLS] (1, 0); the word's rows (0, 1) and (0.2, 0.8) average to (0.1, 0.9)
    np.testing.assert_allclose(merged, [[[0.1, 0.9], [0.4, 0.6]], [[1.0, 0.0], [0.1, 0.9]]])


def test_rollout_is_float64_for_float32_weights():
    w = np.full((1, 1, 3, 3), 1 / 3, dtype=np.float32)
    out = analysis.rollout(w)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out[0], 0.5 * np.eye(3) + 0.5 / 3, rtol=1e-7)


def test_find_word_first_last_and_punctuation():
    r = fake("It saw it ,", np.eye(4))
    assert analysis.word_key("It,") == "it"
    assert analysis.find_word(r, "it") == 0 and analysis.find_word(r, "IT", last=True) == 2
    assert analysis.find_word(r, ",") == 3  # punctuation alone is asked for as itself


def result(tokens, ids, word_ids, words, weights, causal=False):
    w = np.asarray(weights, np.float32)
    facts = ModelFacts("fake", "decoder" if causal else "encoder", "x", w.shape[0], w.shape[1], w.shape[1], 4, 4,
                       "learned", causal, "cpu")
    return AttentionResult(facts, " ".join(words), "self", tokens, ids, np.zeros(len(tokens), bool), word_ids,
                           words, w)


def test_flip_by_hand_with_subtokens_and_two_layers_of_two_heads():
    """Tokens: it | ani mal | street | it | tired (B: wide). "animal" is two sub-tokens: their weights are summed.
    The query is the LAST "it" (token 4); the first "it" (token 0) looks only at itself and would give 0 everywhere.

    Query rows (keys 0..5) and leans (animal - street), per (layer, head):
      (0,0) A .25+.25 - .125 = .375   B .125+.0625 - .5625 = -.375  -> flips, flip = .75
      (0,1) A .5 - .25 = .25          B .375 - .125 = .25           -> no (B still leans to animal)
      (1,0) A .5 - .5 = 0             B .25 - .5 = -.25             -> no (A does not lean, 0 is not > 0)
      (1,1) A .75 - .25 = .5          B .5 - .5 = 0                 -> no (B does not lean, 0 is not < 0)
    """
    a_rows = [[0, .25, .25, .125, .375, 0], [0, .25, .25, .25, .25, 0],
              [0, .25, .25, .5, 0, 0], [0, .5, .25, .25, 0, 0]]
    b_rows = [[0, .125, .0625, .5625, .25, 0], [0, .25, .125, .125, .5, 0],
              [0, .125, .125, .5, .25, 0], [0, .25, .25, .5, 0, 0]]

    def make(rows, last_word, last_id):
        w = np.zeros((2, 2, 6, 6))
        w[..., 0, 0] = 1.0
        w[:, :, 1:4] = 1 / 6
        w[:, :, 5] = 1 / 6
        w[:, :, 4] = np.array(rows).reshape(2, 2, 6)
        return result(["it", "ani", "mal", "street", "it", last_word], [1, 2, 3, 4, 1, last_id],
                      [0, 1, 1, 2, 3, 4], ["it", "animal", "street", "it", last_word], w)

    out = analysis.flip(make(a_rows, "tired", 5), make(b_rows, "wide", 6), "it", ["animal", "street"])
    assert (out.query, out.candidates, out.first_difference, out.query_sees_change) == (
        "it", ["animal", "street"], 5, True)
    t = out.table
    assert list(t.columns) == ["layer", "head", "A:animal", "A:street", "B:animal", "B:street", "lean_a", "lean_b",
                               "flip", "flips"]
    assert t["layer"].tolist() == [0, 0, 1, 1] and t["head"].tolist() == [0, 1, 0, 1]
    np.testing.assert_allclose(t["A:animal"], [.5, .5, .5, .75])
    np.testing.assert_allclose(t["B:street"], [.5625, .125, .5, .5])
    np.testing.assert_allclose(t["lean_a"], [.375, .25, 0, .5])
    np.testing.assert_allclose(t["lean_b"], [-.375, .25, -.25, 0])
    np.testing.assert_allclose(t["flip"], [.75, 0, .25, .5])
    assert t["flips"].tolist() == [True, False, False, False]
    assert out.message == "1 of 4 heads lean to 'animal' in A and to 'street' in B."
    none = analysis.flip(make(b_rows, "tired", 5), make(a_rows, "wide", 6), "it", ["animal", "street"])
    assert none.message == "No head leans to 'animal' in A and to 'street' in B."


def _causal(words, ids):
    n = len(words)
    w = np.tril(np.ones((n, n)))
    return result(words, ids, list(range(n)), words, (w / w.sum(-1, keepdims=True))[None, None], causal=True)


def test_flip_causal_query_at_or_after_the_change_sees_it():
    # "it" twice: the first is before the change (position 2), the last after it; the last one is asked
    a, b = _causal(["it", "cat", "dog", "it"], [1, 2, 3, 1]), _causal(["it", "cat", "fox", "it"], [1, 2, 4, 1])
    out = analysis.flip(a, b, "it", ["cat", "it"])
    assert out.first_difference == 2 and out.query_sees_change
    # the query token itself is the first that differs ("it" vs "It"): it sees its own change
    a, b = _causal(["cat", "sat", "it"], [2, 5, 1]), _causal(["cat", "sat", "It"], [2, 5, 7])
    out = analysis.flip(a, b, "it", ["cat", "sat"])
    assert out.first_difference == 2 and out.query_sees_change


def test_flip_when_one_text_extends_the_other():
    a = fake("animal street it", np.full((3, 3), 1 / 3))
    b = fake("animal street it again", np.full((4, 4), 1 / 4))
    assert analysis.flip(a, b, "it", ["animal", "street"]).first_difference == 3
