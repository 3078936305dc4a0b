"""Page-level views of hand-made attention: which matrix, which labels, which notes."""
import numpy as np
import pytest

from explorer.attention import analysis, matrices, overview
from explorer.attention.matrices import Options
from explorer.attention.result import AttentionResult, ModelFacts
from explorer.maths import causal_mask, pool
from explorer.plots import bertviz

# [CLS] un ##believ ##able cat [SEP]: word 0 is three sub-tokens
TOKENS = ["[CLS]", "un", "##believ", "##able", "cat", "[SEP]"]
SPECIAL = np.array([1, 0, 0, 0, 0, 1], bool)
WORD_IDS = [-1, 0, 0, 0, 1, -1]
WORDS = ["unbelievable", "cat"]


def facts(n_layers=3, n_heads=2, causal=False, kind="encoder"):
    return ModelFacts(name="hand", kind=kind, family="test", n_layers=n_layers, n_heads=n_heads,
                      n_kv_heads=n_heads, d_head=4, d_model=4 * n_heads, position="learned", causal=causal,
                      device="cpu")


def random_weights(shape, seed=0, causal=False):
    rng = np.random.default_rng(seed)
    w = rng.random(shape).astype(np.float32) + 0.05
    if causal:
        w = np.where(~causal_mask(shape[-2], shape[-1]), 0, w)
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)


def result(causal=False, tokens=TOKENS, special=SPECIAL, word_ids=WORD_IDS, words=WORDS, seed=0):
    n = len(tokens)
    return AttentionResult(facts=facts(causal=causal, kind="decoder" if causal else "encoder"), text="x",
                           part="self", tokens=list(tokens), token_ids=list(range(n)), special=np.asarray(special),
                           word_ids=list(word_ids), words=list(words),
                           weights=random_weights((3, 2, n, n), seed, causal))


def enc_dec():
    """Encoder reads TOKENS; decoder has 4 tokens; cross attention is decoder → encoder."""
    enc = result()
    dec_tokens, dec_special = ["<s>", "a", "cat", "sat"], np.array([1, 0, 0, 0], bool)
    dfacts = facts(causal=True, kind="encoder-decoder")

    def part(name, weights, **extra):
        return AttentionResult(facts=dfacts, text="x", part=name, tokens=dec_tokens, token_ids=[0, 1, 2, 3],
                               special=dec_special, word_ids=[-1, 0, 1, 2], words=["a", "cat", "sat"],
                               weights=weights, **extra)
    enc.part = "encoder"
    enc.parts = {"encoder": enc, "decoder": part("decoder", random_weights((3, 2, 4, 4), 1, causal=True)),
                 "cross": part("cross", random_weights((3, 2, 4, 6), 2), key_tokens=TOKENS, key_special=SPECIAL)}
    return enc


def test_plain_head_is_the_models_matrix():
    res = result()
    view = matrices.matrix_view(res, "self", 1, 1, Options())
    np.testing.assert_array_equal(view.matrix, res.weights[1, 1])
    assert view.query_labels == TOKENS and view.key_labels == TOKENS
    assert view.masked is None and view.real_head and view.notes == []
    assert "layer 1 · head 1" in view.title


def test_causal_view_masks_the_upper_triangle():
    view = matrices.matrix_view(result(causal=True), "self", 0, 0, Options())
    np.testing.assert_array_equal(view.masked, ~causal_mask(6, 6))
    assert np.all(view.matrix[view.masked] == 0)


def test_hide_special_renormalises_and_says_so():
    res = result()
    view = matrices.matrix_view(res, "self", 2, 0, Options(hide_special=True))
    assert view.query_labels == TOKENS[1:5] and view.key_labels == TOKENS[1:5]
    assert view.query_positions == [[1], [2], [3], [4]]
    np.testing.assert_allclose(view.matrix.sum(-1), 1, atol=1e-6)
    kept = res.weights[2, 0][1:5, 1:5]
    np.testing.assert_allclose(view.matrix, kept / kept.sum(-1, keepdims=True), rtol=1e-5)
    share = res.weights[2, 0][1:5][:, [0, 5]].sum(-1).mean()
    assert f"{share:.0%}" in view.notes[0] and "renormalised" in view.notes[0]


def test_hide_special_with_none_to_hide_is_a_note_not_a_change():
    res = result(special=np.zeros(6, bool), word_ids=list(range(6)), words=TOKENS)
    view = matrices.matrix_view(res, "self", 0, 0, Options(hide_special=True))
    np.testing.assert_array_equal(view.matrix, res.weights[0, 0])
    assert "nothing to hide" in view.notes[0]


def test_merge_words_means_rows_and_sums_columns():
    res = result()
    view = matrices.matrix_view(res, "self", 0, 1, Options(merge_words=True))
    assert view.query_labels == ["[CLS]", "unbelievable", "cat", "[SEP]"]
    assert view.query_positions == [[0], [1, 2, 3], [4], [5]]
    w = res.weights[0, 1].astype(np.float64)
    np.testing.assert_allclose(view.matrix[1, 1], w[1:4, 1:4].sum(-1).mean(), rtol=1e-5)
    np.testing.assert_allclose(view.matrix[0, 1], w[0, 1:4].sum(), rtol=1e-5)
    np.testing.assert_allclose(view.matrix.sum(-1), 1, atol=1e-6)
    assert any("merged" in n for n in view.notes)


def test_merge_and_hide_together():
    view = matrices.matrix_view(result(), "self", 0, 0, Options(hide_special=True, merge_words=True))
    assert view.query_labels == ["unbelievable", "cat"] and view.key_labels == ["unbelievable", "cat"]
    np.testing.assert_allclose(view.matrix.sum(-1), 1, atol=1e-6)
    assert len(view.notes) == 2


def test_merge_single_token_words_says_nothing_changes():
    res = result(word_ids=[-1, 0, 1, 2, 3, -1], words=["un", "believ", "able", "cat"])
    view = matrices.matrix_view(res, "self", 0, 0, Options(merge_words=True))
    np.testing.assert_allclose(view.matrix, res.weights[0, 0], rtol=1e-6)
    assert "changes nothing" in view.notes[0]


def test_merged_causal_mask_hides_only_fully_hidden_cells():
    view = matrices.matrix_view(result(causal=True), "self", 0, 0, Options(merge_words=True))
    # the word "unbelievable" (positions 1-3) can see itself partly: not masked; "cat" is after it: masked
    assert not view.masked[1, 1] and view.masked[1, 2] and not view.masked[2, 1]


def test_mean_of_heads_is_not_a_real_head():
    res = result()
    view = matrices.matrix_view(res, "self", 2, 1, Options(mean_heads=True))
    np.testing.assert_allclose(view.matrix, res.weights[2].mean(0), rtol=1e-6)
    assert not view.real_head and "Mean of the 2 heads" in view.notes[0]


def test_rollout_multiplies_layers_up_to_the_chosen_one():
    res = result()
    view = matrices.matrix_view(res, "self", 1, 0, Options(rollout=True))
    np.testing.assert_allclose(view.matrix, analysis.rollout(res.weights)[1], rtol=1e-5)
    assert not view.real_head and view.value_name == "rollout" and "rollout" in view.notes[0].lower()
    np.testing.assert_allclose(view.matrix.sum(-1), 1, atol=1e-5)


def test_encoder_decoder_parts():
    res = enc_dec()
    cross = matrices.matrix_view(res, "cross", 0, 0, Options())
    assert cross.query_labels == ["<s>", "a", "cat", "sat"] and cross.key_labels == TOKENS
    assert cross.masked is None and "cross attention" in cross.title
    merged = matrices.matrix_view(res, "cross", 0, 0, Options(merge_words=True, hide_special=True))
    assert merged.key_labels == WORDS and merged.query_labels == ["a", "cat", "sat"]
    decoder = matrices.matrix_view(res, "decoder", 1, 1, Options())
    np.testing.assert_array_equal(decoder.masked, ~causal_mask(4, 4))
    rolled = matrices.matrix_view(res, "cross", 1, 0, Options(rollout=True))
    np.testing.assert_array_equal(rolled.matrix, res.parts["cross"].weights[1, 0])
    assert "cross attention is shown as it is" in rolled.notes[0]
    assert matrices.matrix_view(res, "encoder", 0, 0, Options()).query_labels == TOKENS


def test_layer_view_has_every_head():
    res = result()
    grid = matrices.layer_view(res, "self", 2, Options(hide_special=True))
    assert grid.matrix.shape == (2, 4, 4)
    np.testing.assert_allclose(grid.matrix.sum(-1), 1, atol=1e-6)


def test_row_of_and_default_query():
    res = result(tokens=["[CLS]", "it", "was", "it", "x", "[SEP]"], word_ids=[-1, 0, 1, 2, 3, -1],
                 words=["it", "was", "it", "x"])
    assert matrices.default_query(res) == 3   # the last "it"
    assert matrices.default_query(result()) == 4   # no "it": the last ordinary token
    merged = matrices.matrix_view(result(), "self", 0, 0, Options(merge_words=True, hide_special=True))
    assert matrices.row_of(merged, 2) == 0 and matrices.row_of(merged, 4) == 1
    assert matrices.row_of(merged, 0) == 0 and matrices.row_of(merged, 5) == 1   # hidden tokens: the nearest row


def test_csv_frame_has_tokens_as_index_and_columns():
    view = matrices.matrix_view(result(), "self", 0, 0, Options())
    frame = matrices.csv_frame(view)
    assert list(frame.index) == TOKENS and list(frame.columns) == TOKENS
    np.testing.assert_allclose(frame.to_numpy(), view.matrix, rtol=1e-6)
    assert frame.to_csv().splitlines()[0].startswith("query \\ key,[CLS],un")


def test_overview_tiles_pool_and_hide():
    res = result()
    tiles, masked = overview.tiles(res, "self")
    np.testing.assert_array_equal(tiles, res.weights)
    assert masked is None
    tiles, _ = overview.tiles(res, "self", hide_special=True)
    assert tiles.shape == (3, 2, 4, 4)
    np.testing.assert_allclose(tiles.sum(-1), 1, atol=1e-6)
    tiles, masked = overview.tiles(result(causal=True), "self", side=3)
    assert tiles.shape == (3, 2, 3, 3) and masked.tolist() == [[False, True, True], [False, False, True],
                                                                [False, False, False]]
    stats = overview.stats(res, "self")
    assert stats.shape == (3, 2, len(overview.STATS))
    np.testing.assert_allclose(stats[2, 1], analysis.head_stat_arrays(res.weights[2:3], res.keys_special,
                                                                      overview.STATS)[0, 1])


def test_pool_averages_bins():
    m = np.arange(36, dtype=np.float32).reshape(6, 6)
    pooled = pool(m, 3)
    assert pooled.shape == (3, 3)
    np.testing.assert_allclose(pooled[0, 0], m[:2, :2].mean())
    np.testing.assert_array_equal(pool(m, 10), m)
    assert pool(np.ones((2, 100, 37)), 24).shape == (2, 24, 24)


def test_bertviz_layers_fit_the_cap():
    from explorer.plots.bertviz import max_tokens_for

    assert bertviz.bertviz_layers("model", 10, 6, 12, 3) == list(range(6))
    window = bertviz.bertviz_layers("model", 60, 30, 9, 20)
    assert window and 20 in window and max_tokens_for("model", len(window), 9) >= 60
    assert bertviz.bertviz_layers("head", 10_000, 6, 12, 0) is None
    assert bertviz.bertviz_height("head", 10, 1, 12) > bertviz.bertviz_height("head", 5, 1, 12)


@pytest.mark.parametrize("layer", [0, 2])
def test_view_matrix_is_float32_and_finite(layer):
    view = matrices.matrix_view(result(causal=True), "self", layer, 0, Options(rollout=True, hide_special=True))
    assert view.matrix.dtype == np.float32 and np.isfinite(view.matrix).all()


def test_overview_work_is_remembered_per_live_result():
    res = result()
    first = overview.stats(res, "self")
    assert overview.stats(res, "self") is first
    assert overview.tiles(res, "self", True)[0] is overview.tiles(res, "self", True)[0]
    other = result(seed=1)
    assert overview.stats(other, "self") is not first
    rolled = matrices.matrix_view(res, "self", 2, 0, Options(rollout=True)).matrix
    np.testing.assert_array_equal(matrices.matrix_view(res, "self", 2, 0, Options(rollout=True)).matrix, rolled)
