"""Where a score comes from, per family (explorer.attention.score_origin, explorer.model.anatomy): hand-computed
examples of each formula the family module adds (position rows after padding or with an offset, a linear map folded
into a projection, the split without a norm, interleaved rotary pairs, ALiBi's slopes), the breakdown's extra steps
(Gemma 2's soft cap, a bias carried by the mask, ALiBi's one-row bias), and one head's scores under a per-head mask.
Each example names the number a mutated formula would give instead."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.attention.breakdown import breakdown
from explorer.attention.by_distance import alibi_slopes, alibi_view, halves_order, rotary_view
from explorer.attention.result import AttentionResult, ModelFacts
from explorer.attention.score_origin import distance_question, fold, side_parts
from explorer.labs.positions import rope_cos_sin, rotate_halves
from explorer.model.anatomy import position_rows
from explorer.model.capture import head_record, recompute_tensors


def one_layer(q, k, scaling, *, mask=None, bias=None, softcap=None, weights=None) -> AttentionResult:
    """A one-layer result from hand-made queries ``(1, heads, Q, d)`` and keys ``(1, kv, K, d)``."""
    n_heads, n_q, d = q.shape[1], q.shape[2], q.shape[3]
    if weights is None:
        record = dict(q=q, k=k, scaling=scaling, mask=mask, bias=bias, **({"softcap": softcap} if softcap else {}))
        weights = recompute_tensors(record, torch.float64)[1].numpy()[None]
    facts = ModelFacts("hand", "decoder", "hand", 1, n_heads, k.shape[1], d, d * n_heads, "rope", True, "cpu")
    tokens = [f"t{i}" for i in range(n_q)]
    record = dict(q=q, k=k, scaling=scaling, mask=mask, bias=bias, **({"softcap": softcap} if softcap else {}))
    return AttentionResult(facts, " ".join(tokens), "self", tokens, list(range(n_q)), np.zeros(n_q, bool),
                           list(range(n_q)), tokens, np.asarray(weights, np.float32), score_records=(record,))


# ---------------------------------------------------------------------------------------------- learned positions

def test_position_rows_by_hand():
    """RoBERTa with padding_idx 1 and ids [0, 5, 1, 7] (the third a padding token): non-padding tokens count
    1, 2, ·, 3 → rows 2, 3, 1 (padding keeps padding_idx), 4. Reading row i would give [0, 1, 2, 3]; counting from
    padding_idx without the + 1 would give [1, 2, 1, 3]. OPT and BART: row i + 2."""
    np.testing.assert_array_equal(position_rows([0, 5, 1, 7], "after_padding", padding_idx=1), [2, 3, 1, 4])
    np.testing.assert_array_equal(position_rows([4, 4, 4], "offset", offset=2), [2, 3, 4])
    np.testing.assert_array_equal(position_rows([4, 4, 4], "index", offset=2), [0, 1, 2])


def test_fold_a_projection_by_hand():
    """W = [[1, 0, 2], [0, 1, 0]], b = [0.5, 0] after P = [[1, 1], [0, 2], [1, 0]], p = [1, 0, −1]. Folded:
    W·P = [[3, 1], [0, 2]], W·p + b = [−0.5, 0]. For x = [2, −1]: P·x + p = [2, −2, 1], W·(that) + b = [4.5, −2]
    = [[3, 1], [0, 2]]·x + [−0.5, 0]. Forgetting p would give [5, −2]."""
    w, b = np.array([[1.0, 0, 2], [0, 1, 0]]), np.array([0.5, 0])
    p_w, p_b = np.array([[1.0, 1], [0, 2], [1, 0]]), np.array([1.0, 0, -1])
    fw, fb = fold((w, b), (p_w, p_b), slice(0, 2))
    np.testing.assert_allclose(fw, [[3, 1], [0, 2]])
    np.testing.assert_allclose(fb, [-0.5, 0])
    np.testing.assert_allclose(fw @ [2.0, -1] + fb, [4.5, -2])
    row, row_b = fold((w, b), None, slice(1, 2))                   # one head's rows, nothing folded
    np.testing.assert_allclose(row, [[0, 1, 0]]) and np.testing.assert_allclose(row_b, [0])


def test_side_parts_without_a_norm():
    """OPT-like input that goes straight in: t = [1, 2], p = [3, −1], W = [[1, 1], [2, 0]], b = [0, 1]:
    token W·t = [3, 2], position W·p = [2, 6], shift 0, bias [0, 1]; together W·(t + p) + b = [5, 9]."""
    parts = side_parts(np.array([1.0, 2]), np.array([3.0, -1]), None, None, None, None, np.array([[1.0, 1], [2, 0]]),
                       np.array([0.0, 1]))
    np.testing.assert_allclose(parts["token"], [3, 2])
    np.testing.assert_allclose(parts["position"], [2, 6])
    np.testing.assert_allclose(parts["shift"], [0, 0])
    np.testing.assert_allclose(sum(parts.values()), [5, 9])


# ---------------------------------------------------------------------------------------------- rotary

def test_interleaved_pairs_by_hand():
    """GPT-J pairs dimensions (0, 1), (2, 3); at position 1 with angles [π/2, π/4], [1, 0, 0, 1, 7, 8] turns to
    [0, 1, −√2/2, √2/2, 7, 8]: the order [0, 2, 1, 3, 4, 5] puts it in the halves layout that rotate_halves turns.
    Rotating in halves without reordering would give [0, −√2/2, 1, √2/2, 7, 8]."""
    order = halves_order(6, 2, "interleaved")
    np.testing.assert_array_equal(order, [0, 2, 1, 3, 4, 5])
    np.testing.assert_array_equal(halves_order(6, 2, "halves"), np.arange(6))
    cos, sin = rope_cos_sin(np.array([1]), np.array([math.pi / 2, math.pi / 4]))
    x = np.array([1.0, 0, 0, 1, 7, 8])
    turned = rotate_halves(x[order], cos[0], sin[0])[np.argsort(order)]
    h = math.sqrt(0.5)
    np.testing.assert_allclose(turned, [0, 1, -h, h, 7, 8], atol=1e-12)


def test_interleaved_pairs_match_gptj_code():
    """The same reordering against transformers' own GPT-J rotation, on random vectors."""
    from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb, create_sinusoidal_positions
    table = create_sinusoidal_positions(16, 4)                      # (positions, sin | cos), rotary_dim 4
    x = torch.randn(1, 1, 1, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    sin, cos = table[5:6, :2][None].double(), table[5:6, 2:][None].double()
    theirs = torch.cat([apply_rotary_pos_emb(x[..., :4], sin, cos), x[..., 4:]], -1)[0, 0, 0].numpy()   # as GPT-J
    inv_freq = np.arctan2(table[1, :2].double().numpy(), table[1, 2:].double().numpy())
    c, s = rope_cos_sin(np.array([5]), inv_freq)
    order = halves_order(8, 2, "interleaved")
    ours = rotate_halves(x[0, 0, 0].numpy()[order], c[0], s[0])[np.argsort(order)]
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_rotary_view_of_an_encoder_reaches_later_keys():
    """A query at 0 reading the key at 2 of a bidirectional model: its own distance is −2; the curve runs from
    −(span − 1) and gives the score there."""
    q = torch.tensor([[[[1.0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]]])
    k = torch.tensor([[[[0.0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 1, 0]]]])
    res = one_layer(q, k, 0.5)
    b = breakdown(res, 0, 0, 0, 2)
    inv_freq = np.array([0.0, 0.0])                                 # no rotation: the curve is flat at the score
    r = rotary_view(inv_freq, 1.0, "halves", b, 3, causal=False)
    assert r.own == -2 and r.earliest == -2 and r.distances.min() < -100 and r.at_own == pytest.approx(b.score)


# ---------------------------------------------------------------------------------------------- ALiBi

def test_alibi_slopes_by_hand():
    """4 heads: 2^−2, 2^−4, 2^−6, 2^−8. 6 heads: those four, then every other slope of the 8-head sequence
    (2^−1, 2^−3). Transformers' BLOOM code gives the same."""
    np.testing.assert_allclose(alibi_slopes(4), [0.25, 0.0625, 0.015625, 0.00390625])
    np.testing.assert_allclose(alibi_slopes(6), [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125])
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor
    for n in (4, 6, 12):
        theirs = build_alibi_tensor(torch.ones(1, 2), n, torch.float64)[:, 0, 1].numpy()   # slope × position 1
        np.testing.assert_allclose(alibi_slopes(n), theirs, rtol=1e-6)


def test_alibi_view_by_hand():
    """2 heads: slopes 2^−4 = 0.0625 and 2^−8. Head 0, query at 3, key at 1, bias 0.0625 × 1 = 0.0625: along the
    row that is −0.0625 × distance 2 = −0.125 plus 0.0625 × 3 = 0.1875 for every key. Falcon adds it before its
    scale 0.5: 0.03125. The breakdown reads the one-row bias (shape (1, heads, 1, keys)) for every query."""
    slopes = np.array([0.0625, 0.00390625])
    bias = torch.tensor(slopes[:, None] * np.arange(4)[None], dtype=torch.float32)[None, :, None, :]
    q = torch.zeros(1, 2, 4, 2)
    k = torch.zeros(1, 2, 4, 2)
    b = breakdown(one_layer(q, k, 0.5, bias=bias), 0, 0, 3, 1)
    assert b.bias == pytest.approx(0.0625) and b.score == pytest.approx(0.0625)
    a = alibi_view(b)
    assert (a.slope, a.expected, a.penalty, a.constant, a.distance) == pytest.approx((0.0625, 0.0625, -0.125,
                                                                                      0.1875, 2))
    assert alibi_view(b, bias_scaled=True).expected == pytest.approx(0.03125)
    assert breakdown(one_layer(q, k, 0.5, bias=bias), 0, 1, 2, 3).bias == pytest.approx(3 * 0.00390625)


# ---------------------------------------------------------------------------------------------- the breakdown's steps

def test_soft_cap_by_hand():
    """Gemma 2: query [1, 2], keys [3, −1], [0.5, 1], scale 0.5: scale·q·k = 0.5 and 1.25; cap 1:
    tanh(0.5) = 0.462117, tanh(1.25) = 0.848284; e^ those 1.587431, 2.335635, sum 3.923066: weights 0.404640,
    0.595360 (without the cap:
    0.320821, 0.679179)."""
    q = torch.tensor([[[[0.0, 0], [1, 2]]]])
    k = torch.tensor([[[[3.0, -1], [0.5, 1]]]])
    b = breakdown(one_layer(q, k, 0.5, softcap=1.0), 0, 0, 1, 1)
    assert b.softcap == 1.0 and b.dot == 2.5
    assert b.score == pytest.approx(0.848284, abs=1e-6) and b.capped == pytest.approx(0.848284, abs=1e-6)
    np.testing.assert_allclose(b.row_scores, [0.462117, 0.848284], atol=1e-6)
    assert b.weight == pytest.approx(0.595360, abs=1e-6) and b.gap < 1e-6


def test_mask_that_carries_a_bias_by_hand():
    """Falcon with ALiBi also puts its bias into the mask: a mask row [0.3, −0.2] (nothing hidden) adds to the
    scores 0.5 and 1.25: 0.8 and 1.05; the key it hides stays hidden."""
    q = torch.tensor([[[[0.0, 0], [1, 2]]]])
    k = torch.tensor([[[[3.0, -1], [0.5, 1]]]])
    low = torch.finfo(torch.float32).min
    mask = torch.tensor([[[[0.0, low], [0.3, -0.2]]]])
    res = one_layer(q, k, 0.5, mask=mask)
    b = breakdown(res, 0, 0, 1, 1)
    assert b.mask_bias == pytest.approx(-0.2) and b.score == pytest.approx(1.05)
    np.testing.assert_allclose(b.row_scores, [0.8, 1.05], atol=1e-6)
    assert b.gap < 1e-6 and breakdown(res, 0, 0, 0, 1).masked


def test_one_heads_scores_read_its_own_mask():
    """A mask given per head (Falcon with ALiBi) is narrowed with the head: head 1's scores add head 1's mask
    row [0, 0.5], not head 0's [0, 0]."""
    q = torch.ones(1, 2, 1, 2)
    k = torch.ones(1, 2, 2, 2)
    mask = torch.tensor([[[[0.0, 0.0]], [[0.0, 0.5]]]])
    record = dict(q=q, k=k, scaling=1.0, mask=mask, bias=None)
    scores = recompute_tensors(head_record(record, 1))[0][0].numpy()
    np.testing.assert_allclose(scores, [[2.0, 2.5]])
    np.testing.assert_allclose(recompute_tensors(record)[0][1].numpy(), scores)


def test_an_encoders_distance_question_offers_later_keys():
    """Query at 1 of 4 tokens in an encoder, inv_freq [π/2]: distances −2 … 1 are possible. The captured query
    [1, 0] is rotated; turned back by π/2 it is [0, −1]; the key [0, 1] at 0 is unturned. At distance d the score
    is 0.5 · (rotate([0, −1], dπ/2) · [0, 1]) = −0.5 · cos(dπ/2): +0.5, 0, −0.5, 0 for d = −2, −1, 0, 1 (at its own
    distance 1, the heatmap's 0.5 · [1, 0]·[0, 1] = 0). Highest 2 tokens ahead; a wrong sign of the turn back
    would give [0, 1] and the curve's negative."""
    q = torch.tensor([[[[0.0, 0], [1, 0], [0, 0], [0, 0]]]])
    k = torch.tensor([[[[0.0, 1], [0, 0], [0, 0], [0, 0]]]])
    b = breakdown(one_layer(q, k, 0.5), 0, 0, 1, 0)
    r = rotary_view(np.array([math.pi / 2]), 1.0, "halves", b, 4, causal=False)
    np.testing.assert_allclose(r.query_before, [0, -1], atol=1e-12)
    assert r.earliest == -2 and r.peak(1) == -2 and r.at_own == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose([r.curve[r.distances == d][0] for d in (-2, -1, 0, 1)], [0.5, 0, -0.5, 0],
                               atol=1e-12)
    question = distance_question(r, b)
    assert question.correct == "2 tokens ahead" and set(question.options) <= {
        "2 tokens ahead", "1 token ahead", "0 (itself)", "1 token back"}


def test_a_model_without_a_part_its_family_names_gets_one_sentence(tiny_loaded):
    """A BERT model whose embedding norm is not where BERT keeps it: the origin says so, naming the path."""
    from tiny import TEXT

    from explorer.attention.result import extract
    from explorer.attention.score_origin import origin
    loaded = tiny_loaded("bert")
    result = extract(loaded, TEXT)
    b = breakdown(result, 0, 0, 2, 1)
    norm = loaded.model.embeddings.LayerNorm
    del loaded.model.embeddings.LayerNorm
    try:
        where = origin(loaded.model, result, b)
    finally:
        loaded.model.embeddings.LayerNorm = norm
    assert where.kind == "none" and where.sentence == ("This BERT model has no embedding norm at "
                                                       "'embeddings.LayerNorm', where the BERT family keeps it.")
    assert origin(loaded.model, result, b).kind == "learned"
