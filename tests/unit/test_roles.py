"""Head-role scores on hand-built attention patterns, JS distance and MDS by hand, and the drivers on tiny models."""
import numpy as np
import pytest

from explorer.heads_do import roles


def _patterns(n_q: int, pick) -> np.ndarray:
    """A one-hot ``[query, key]`` pattern: query i looks at key pick(i)."""
    w = np.zeros((n_q, n_q))
    for i in range(n_q):
        w[i, pick(i)] = 1.0
    return w


def test_previous_first_and_broad_scores_on_hand_built_heads():
    n = 6
    prev = _patterns(n, lambda i: max(i - 1, 0))
    first = _patterns(n, lambda i: 0)
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]      # causal, each row uniform
    w = np.stack([prev, first, uniform])[None]                              # (1 layer, 3 heads, 6, 6)
    np.testing.assert_allclose(roles.previous_token_score(w), [[1.0, 0.2, np.mean(1 / np.arange(2, 7))]])
    np.testing.assert_allclose(roles.first_token_score(w), [[2 / 6, 1.0, np.mean(1 / np.arange(1, 7))]])
    np.testing.assert_allclose(roles.broad_score(w, causal=True), [[0.0, 0.0, 1.0]], atol=1e-12)
    # bidirectional: a uniform row over all 6 keys is 1, a row uniform over half of them is ln 3 / ln 6
    half = np.zeros((n, n))
    half[:, :3] = 1 / 3
    np.testing.assert_allclose(roles.broad_score(np.stack([np.full((n, n), 1 / n), half]), causal=False),
                               [1.0, np.log(3) / np.log(6)])


def test_duplicate_and_induction_scores_on_hand_built_heads():
    # [BOS] a b c a b c : offset 1, n 3, queries 4, 5, 6
    n, offset, total = 3, 1, 7
    induction = _patterns(total, lambda i: i - n + 1 if i >= offset + n else 0)
    duplicate = _patterns(total, lambda i: i - n if i >= offset + n else 0)
    previous = _patterns(total, lambda i: max(i - 1, 0))
    dup, ind = roles.repeat_scores(np.stack([induction, duplicate, previous]), n, offset)
    np.testing.assert_allclose(ind, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(dup, [0.0, 1.0, 0.0])
    half = (induction + duplicate) / 2
    assert roles.repeat_scores(half, n, offset) == (0.5, 0.5)


def test_js_distance_by_hand():
    assert roles.js_distance([1, 0], [0, 1]) == pytest.approx(1.0)
    assert roles.js_distance([0.3, 0.7], [0.3, 0.7]) == pytest.approx(0.0)
    # M = (.75, .25); KL(p‖M) = log2(4/3) = 0.4150375; KL(q‖M) = .5·log2(2/3) + .5·log2(2) = 0.2075187
    assert roles.js_distance([1, 0], [0.5, 0.5]) == pytest.approx(np.sqrt((0.4150375 + 0.2075187) / 2), rel=1e-6)
    np.testing.assert_allclose(roles.js_distance(np.array([[1, 0], [0, 1]]), np.array([0, 1])), [1.0, 0.0])


def test_mds_recovers_points_on_a_line():
    x = np.array([0.0, 1.0, 3.0, 7.0, 8.5])
    d = np.abs(x[:, None] - x[None, :])
    coords = roles.classical_mds(d)
    assert coords.shape == (5, 2)
    recovered = np.linalg.norm(coords[:, None] - coords[None, :], axis=-1)
    np.testing.assert_allclose(recovered, d, atol=1e-9)
    # A line needs one dimension. The second eigenvalue is 0 up to the eigensolver's rounding, which the function
    # takes as 0 (below 10·n·eps·λ_max); were it kept, its square root would be ~sqrt(n·eps·λ_max) ≈ 2.5e-7 here.
    np.testing.assert_allclose(coords[:, 1], 0.0, atol=1e-12)
    np.testing.assert_allclose(np.abs(coords[:, 0] - coords[0, 0]), x, atol=1e-9)


def test_head_distances_are_zero_for_equal_heads_and_symmetric():
    n = 5
    prev = _patterns(n, lambda i: max(i - 1, 0))
    first = _patterns(n, lambda i: 0)
    w = np.stack([prev, first, prev])[None]                                 # heads 0 and 2 identical
    d = roles.head_distances([w, w])
    assert d.shape == (3, 3)
    np.testing.assert_allclose(d, d.T)
    assert d[0, 2] == 0 and d[0, 0] == 0
    assert d[0, 1] == pytest.approx(3 / 5)   # rows 0 and 1 agree (key 0), rows 2–4 are disjoint one-hots: 1 each


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_repeated_tokens_avoid_special_ids(tiny_loaded, family):
    tok = tiny_loaded(family).tokenizer
    ids, offset = roles.repeated_tokens(tok, n=10, seed=3)
    body = ids[offset:offset + 20]
    assert body[:10] == body[10:] and not set(body) & set(tok.all_special_ids)
    assert offset == (1 if family == "bert" else 0)                        # [CLS] comes first in BERT
    assert roles.repeated_tokens(tok, n=10, seed=3) == (ids, offset)       # fixed seed, same tokens


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_head_roles_and_similar_heads_on_tiny_models(tiny_loaded, family):
    loaded = tiny_loaded(family)
    frame = roles.head_roles(loaded, texts=["the cat sat on the mat .", "the dog bites man ."], n=8)
    assert list(frame.columns) == ["layer", "head", *roles.ROLE_NAMES] and len(frame) == 8
    assert ((frame[list(roles.ROLE_NAMES)] >= -1e-6) & (frame[list(roles.ROLE_NAMES)] <= 1 + 1e-6)).all().all()
    ids, offset = roles.repeated_tokens(loaded.tokenizer, 8, 0)
    w = roles.attention_of_ids(loaded, ids)
    _dup, ind = roles.repeat_scores(w, 8, offset)
    np.testing.assert_allclose(frame["induction"], ind.ravel(), atol=1e-7)
    amap = roles.similar_heads(loaded, texts=["the cat sat on the mat ."])
    assert list(amap.columns) == ["layer", "head", "x", "y"] and np.isfinite(amap[["x", "y"]].to_numpy()).all()
