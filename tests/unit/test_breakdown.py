"""One score taken apart (explorer.attention.breakdown, score_origin): hand-computed examples for every step and
split, then the tiny random model of each family, where the parts must add up to the model's own score (to 1e-5
of its size: float32 rounding of a dot product is a few 1e-7 of Σ|qᵢkᵢ|) and our softmax must give its weights."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from projections import query_key_projections
from tiny import FAMILIES, TEXT

from explorer.attention import matrices
from explorer.attention.breakdown import breakdown, carriers, dimension_question, kv_head_of
from explorer.attention.by_distance import relative_curve
from explorer.attention.result import AttentionResult, ModelFacts, extract
from explorer.attention.score_origin import (
    NEAR_PEAK,
    PositionSplit,
    distance_question,
    origin,
    peak_range,
    side_parts,
    split_terms,
)
from explorer.labs.positions import rope_cos_sin, rotate_halves, unrotate_halves


def hand_result(bias=None, mask=None) -> AttentionResult:
    """One layer, 2 query heads sharing 1 key head, d_head 2, two tokens. Query head 1 at token 1 is [1, 2];
    the keys are [3, −1] and [0.5, 1]; scale 0.5. By hand: scores 0.5·(3 − 2) = 0.5 and 0.5·(0.5 + 2) = 1.25;
    softmax: e^0.5 = 1.64872, e^1.25 = 3.49034, sum 5.13906 → weights 0.32082, 0.67918."""
    q = torch.zeros(1, 2, 2, 2)
    q[0, 1, 1] = torch.tensor([1.0, 2.0])
    q[0, 1, 0] = torch.tensor([2.0, 0.0])
    q[0, 0] = torch.tensor([[1.0, 1.0], [1.0, 1.0]])
    k = torch.tensor([[[[3.0, -1.0], [0.5, 1.0]]]])
    weights = np.zeros((1, 2, 2, 2), np.float32)
    weights[0, 1, 1] = [0.32082, 0.67918]
    facts = ModelFacts("hand", "encoder", "hand", 1, 2, 1, 2, 4, "learned", False, "cpu")
    return AttentionResult(facts, "a b", "self", ["a", "b"], [5, 6], np.zeros(2, bool), [0, 1], ["a", "b"],
                           weights, score_records=(dict(q=q, k=k, scaling=0.5, mask=mask, bias=bias),))


def test_hand_breakdown_every_step():
    b = breakdown(hand_result(), layer=0, head=1, query=1, key=1)
    assert b.kv_head == 0 and b.grouped and kv_head_of(1, 2, 1) == 0
    np.testing.assert_array_equal(b.query_vector, [1.0, 2.0])
    np.testing.assert_array_equal(b.key_vector, [0.5, 1.0])
    np.testing.assert_array_equal(b.products, [0.5, 2.0])
    assert b.dot == 2.5 and b.scale == 0.5 and b.score == 1.25          # a missing scale would give 2.5
    np.testing.assert_allclose(b.row_scores, [0.5, 1.25])
    np.testing.assert_allclose(b.row_weights, [0.320821, 0.679179], atol=1e-6)
    assert abs(b.weight - 0.679179) < 1e-6 and b.gap < 1e-5
    assert list(b.order) == [1, 0] and list(b.carriers) == [1, 0]        # 2.0 alone does not reach 2.5
    other = breakdown(hand_result(), 0, 1, 1, 0)                         # products [3, −2]: dimension 0 alone
    assert other.score == 0.5 and list(other.carriers) == [0] and other.carried == 1.5


def test_hand_bias_and_mask():
    bias = torch.zeros(1, 2, 2, 2)
    bias[0, 1, 1] = torch.tensor([0.1, -0.3])
    b = breakdown(hand_result(bias=bias), 0, 1, 1, 1)
    assert b.bias == pytest.approx(-0.3) and b.score == pytest.approx(0.95)   # 1.25 − 0.3
    e = np.exp([0.5 + 0.1, 0.95])
    assert b.weight == pytest.approx(e[1] / e.sum())
    mask = torch.tensor([[[[0.0, torch.finfo(torch.float32).min], [0.0, 0.0]]]])
    hidden = breakdown(hand_result(mask=mask), 0, 0, 0, 1)
    assert hidden.masked and hidden.weight == 0.0 and breakdown(hand_result(mask=mask), 0, 0, 0, 0).weight == 1.0


def test_carriers_reach_the_whole_sum():
    order, marked = carriers(np.array([1.0, -4.0, 2.0, 2.5, 1.5]))      # sum 3: 2.5 < 3, 2.5 + 2 = 4.5 ≥ 3
    assert list(order) == [3, 2, 4, 0, 1] and list(marked) == [3, 2]
    order, marked = carriers(np.array([-1.0, -2.0, 0.5]))               # a negative score: pushed down most first
    assert list(order) == [1, 0, 2] and list(marked) == [1, 0]
    assert len(carriers(np.zeros(3))[1]) == 0
    assert len(carriers(np.ones(20), most=8)[1]) == 8


def test_errors_say_what_to_do():
    with pytest.raises(ValueError, match="out of range"):
        breakdown(hand_result(), 0, 1, 2, 0)
    bare = hand_result()
    bare.score_records = None
    bare.facts = ModelFacts(**{**bare.facts.__dict__, "family": "bloom"})
    with pytest.raises(ValueError, match=r"^hand \(BLOOM\) computes attention in its own code: .*captured"):
        breakdown(bare, 0, 0, 0, 0)


# ---------------------------------------------------------------------------------------------- learned split

def test_hand_side_parts():
    """t = [1, 2, 3], p = [1, 0, 5]: x = [2, 2, 8], mean 4, var 8, eps 1 → σ = 3. γ = [1, 2, 1], β = [0, 1, 0],
    W = [[1, 0, 0], [0, 1, 1]], b = [0.5, −0.5]. Token: γ(t − 2)/3 = [−1/3, 0, 1/3] → W: [−1/3, 1/3]; position:
    γ(p − 2)/3 = [−1/3, −4/3, 1] → [−1/3, −1/3]; shift Wβ = [0, 1]; bias [0.5, −0.5]. Together [−1/6, 1/2], what
    W·norm(x) + b gives directly: norm(x) = [−2/3, −1/3, 4/3]."""
    parts = side_parts(np.array([1.0, 2, 3]), np.array([1.0, 0, 5]), None, np.array([1.0, 2, 1]),
                       np.array([0.0, 1, 0]), 1.0, np.array([[1.0, 0, 0], [0, 1, 1]]), np.array([0.5, -0.5]))
    np.testing.assert_allclose(parts["token"], [-1 / 3, 1 / 3])
    np.testing.assert_allclose(parts["position"], [-1 / 3, -1 / 3])
    np.testing.assert_allclose(parts["shift"], [0, 1])
    np.testing.assert_allclose(parts["bias"], [0.5, -0.5])
    np.testing.assert_allclose(sum(parts.values()), [-1 / 6, 1 / 2])
    assert "type" not in parts


def test_hand_split_terms():
    """Query parts as above; key parts token [1, 0], position [0, 2], shift 0, bias [1, 1]; scale 0.5.
    token·token = 0.5·(−1/3) = −1/6; token·position = 0.5·(2/3) = 1/3; position·token = −1/6;
    position·position = 0.5·(−2/3) = −1/3; the rest: q_rest = [0.5, 0.5], k_rest = [1, 1]:
    0 − 2/3 + 0.5 + 1 + 1 = 11/6 → 11/12. Sum 7/12 = 0.5 · ([−1/6, 1/2] · [2, 3])."""
    q = dict(token=np.array([-1 / 3, 1 / 3]), position=np.array([-1 / 3, -1 / 3]), shift=np.array([0.0, 1]),
             bias=np.array([0.5, -0.5]))
    k = dict(token=np.array([1.0, 0]), position=np.array([0.0, 2]), shift=np.zeros(2), bias=np.array([1.0, 1]))
    split = split_terms(q, k, 0.5, 7 / 12)
    assert isinstance(split, PositionSplit)
    expected = {"token·token": -1 / 6, "token·position": 1 / 3, "position·token": -1 / 6,
                "position·position": -1 / 3, "rest": 11 / 12}
    assert split.parts.keys() == expected.keys()
    for name, value in expected.items():
        assert split.parts[name] == pytest.approx(value), name      # a swapped term gives −1/6 for 1/3
    assert split.total == pytest.approx(7 / 12) and len(split.terms) == 16


# ---------------------------------------------------------------------------------------------- rotary

def test_hand_rotation():
    """inv_freq [π/2, π/4] at position 1: pair 0 (dims 0, 2) turns 90°, pair 1 (dims 1, 3) 45°.
    [1, 0, 0, 1] → pair 0 (1, 0) → (0, 1); pair 1 (0, 1) → (−√2/2, √2/2): [0, −√2/2, 1, √2/2]."""
    cos, sin = rope_cos_sin(np.array([1]), np.array([math.pi / 2, math.pi / 4]))
    turned = rotate_halves(np.array([1.0, 0, 0, 1]), cos[0], sin[0])
    h = math.sqrt(0.5)
    np.testing.assert_allclose(turned, [0, -h, 1, h], atol=1e-12)   # the wrong sign gives [0, h, −1, h]
    np.testing.assert_allclose(unrotate_halves(turned, cos[0], sin[0]), [1, 0, 0, 1], atol=1e-12)
    c2, s2 = rope_cos_sin(np.array([1]), np.array([math.pi / 2, math.pi / 4]), scaling=2.0)
    np.testing.assert_allclose(unrotate_halves(rotate_halves([1.0, 0, 0, 1], c2[0], s2[0]), c2[0], s2[0]),
                               [1, 0, 0, 1], atol=1e-12)
    partial = rotate_halves(np.array([1.0, 0, 7, 8]), cos[:, :1][0], sin[:, :1][0])   # 2 of 4 dims rotated
    np.testing.assert_allclose(partial, [0, 1, 7, 8], atol=1e-12)


def test_hand_relative_curve():
    """q = [1, 0, 0, 0], k = [0, 0, 1, 0], pair 0 turning 90° a position: the query at d, the key at 0 score
    (cos dπ/2, sin dπ/2) · (0, 1) = sin(dπ/2): 0, 1, 0, −1 for d = 0…3; times scale 0.5."""
    curve = relative_curve(np.array([1.0, 0, 0, 0]), np.array([0.0, 0, 1, 0]), np.arange(4),
                           np.array([math.pi / 2, math.pi / 4]), 1.0, 0.5)
    np.testing.assert_allclose(curve, [0, 0.5, 0, -0.5], atol=1e-12)   # the wrong sign gives −0.5 at d = 1


# ---------------------------------------------------------------------------------------------- several queries

def test_several_queries_sum_and_mean():
    view = matrices.MatrixView(np.array([[1.0, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]), ["a", "b", "c"],
                               ["a", "b", "c"], [[0], [1], [2]], [[0], [1], [2]], None, "t")
    frame = matrices.several_queries(view, [2, 0])
    assert list(frame.columns) == ["a · 0", "c · 2", "sum", "mean"]
    np.testing.assert_allclose(frame["sum"], [1.2, 0.3, 0.5])
    np.testing.assert_allclose(frame["mean"], [0.6, 0.15, 0.25])
    assert frame["mean"].sum() == pytest.approx(1.0) and list(frame.index) == ["a · 0", "b · 1", "c · 2"]


# ---------------------------------------------------------------------------------------------- tiny models

@pytest.fixture(scope="module")
def tiny_results(tiny_loaded):
    return {family: (tiny_loaded(family), extract(tiny_loaded(family), TEXT)) for family in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_score_of_a_tiny_model_adds_up(tiny_results, family):
    loaded, result = tiny_results[family]
    kinds = set()
    for res in [result, *result.parts.values()] if result.parts else [result]:
        n = len(res.tokens)
        for layer in range(res.facts.n_layers):
            for head in range(res.facts.n_heads):
                scores = res.head_scores(layer, head)
                for query in range(n):
                    for key in range(len(res.keys)):
                        b = breakdown(res, layer, head, query, key)
                        assert b.gap < 1e-5, (family, layer, head, query, key)
                        if b.masked:
                            assert scores[query, key] == -np.inf and b.weight == 0
                            continue
                        assert abs(b.score - scores[query, key]) <= 1e-5 * b.size
                        where = origin(loaded.model, res, b)
                        kinds.add(where.kind)
                        if where.split is not None:
                            assert abs(where.split.total - scores[query, key]) <= 1e-5 * b.size
                        if where.rotary is not None:
                            assert abs(where.rotary.at_own - scores[query, key]) <= 1e-5 * b.size
    assert kinds == {"bert": {"learned", "later"}, "gpt2": {"learned", "later"}, "llama": {"rope"},
                     "t5": {"relative", "none"}}[family]


def test_tiny_llama_pre_rotary_vectors_are_the_projections(tiny_results):
    """Turned back with the model's own table, the captured query and key are q_proj and k_proj of the layer's
    normed input (caught by a hook): the rotation is undone with the right frequencies and sign."""
    loaded, result = tiny_results["llama"]
    q, k = query_key_projections(loaded, 1, TEXT, result.facts.d_head)   # (token, head, d_head) each
    b = breakdown(result, 1, 3, 6, 2)
    r = origin(loaded.model, result, b).rotary
    np.testing.assert_allclose(r.query_before, q[6, 3], atol=1e-5)
    np.testing.assert_allclose(r.key_before, k[2, b.kv_head], atol=1e-5)
    assert r.before == pytest.approx(float(q[6, 3] @ k[2, b.kv_head]) * b.scale, abs=1e-5)


def test_tiny_families_positions(tiny_loaded):
    """The origin's kind is the family module's: no attribute sniffing."""
    from explorer.model import families
    assert families.positions_of(tiny_loaded("bert").model) == "learned"
    assert families.positions_of(tiny_loaded("llama").model) == "rope"
    assert families.positions_of(tiny_loaded("t5").model) == "relative"


def test_questions_follow_the_numbers(tiny_results):
    loaded, result = tiny_results["llama"]
    b = breakdown(result, 0, 1, 9, 1)
    q = dimension_question(b)
    assert q.correct == f"dimension {int(b.order[0])}" and len(q.options) >= 3
    r = origin(loaded.model, result, b).rotary
    dq = distance_question(r, b)
    peak = r.peak(9)
    assert r.curve[peak] == r.curve[:10].max()
    low, high = peak_range(r, 9)   # the answer: the peak, or the run of distances that tie with it
    assert low <= peak <= high and r.curve[low:high + 1].min() >= r.curve[peak] - NEAR_PEAK * np.ptp(r.curve[:10])
    assert dq.correct == (f"{low}–{high} tokens back" if low < high else f"{peak} tokens back" if peak > 1 else
                          ["0 (itself)", "1 token back"][peak])
    others = [int(o.split()[0]) for o in dq.options if o != dq.correct]
    assert others and all(d <= 9 and r.curve[d] < r.curve[peak] - NEAR_PEAK * np.ptp(r.curve[:10]) for d in others)
