"""Unit tests of explorer.positions: exact values, and the invariants each encoding is built to have."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from explorer.labs import positions as P


# ---------------------------------------------------------------------------------------------- sinusoidal
def test_position_zero_is_sin0_cos0():
    enc = P.sinusoidal_encoding(5, 8)
    assert enc.shape == (5, 8)
    np.testing.assert_array_equal(enc[0], [0, 1, 0, 1, 0, 1, 0, 1])


def test_sinusoidal_exact_values_against_a_scalar_loop():
    # base 10000 (the seed's), d_model 4: pair 0 has w = 1, pair 1 has w = 10000 ** (-2/4) = 1/100
    enc = P.sinusoidal_encoding(3, 4)
    assert enc[1, 0] == pytest.approx(math.sin(1.0), abs=1e-15)
    assert enc[1, 1] == pytest.approx(math.cos(1.0), abs=1e-15)
    assert enc[1, 2] == pytest.approx(math.sin(0.01), abs=1e-15)
    assert enc[2, 3] == pytest.approx(math.cos(0.02), abs=1e-15)
    assert enc[1, 0] == pytest.approx(0.8414709848078965)
    n, d = 30, 10
    big = P.sinusoidal_encoding(n, d)
    for pos in range(n):
        for j in range(d):
            angle = pos / 10000 ** (2 * (j // 2) / d)
            assert big[pos, j] == pytest.approx(math.sin(angle) if j % 2 == 0 else math.cos(angle), abs=1e-12)


def test_sinusoidal_odd_width_and_range():
    enc = P.sinusoidal_encoding(50, 7)
    assert enc.shape == (50, 7)
    assert np.all(np.abs(enc) <= 1)
    np.testing.assert_array_equal(enc[0], [0, 1, 0, 1, 0, 1, 0])


def test_frequencies():
    w = P.sinusoid_frequencies(512)
    assert w.shape == (256,)
    assert w[0] == 1.0
    assert w[1] == pytest.approx(10000 ** (-2 / 512))
    assert np.all(np.diff(w) < 0)  # later pairs rotate more slowly


@pytest.mark.parametrize("offset", [0, 1, 5, 37])
def test_offset_is_one_linear_map_for_every_position(offset):
    check = P.check_offset_is_linear(120, 64, offset)
    assert check.max_error < 1e-12
    assert check.predicted.shape == (120 - offset, 64)
    if offset == 0:
        np.testing.assert_allclose(check.matrix, np.eye(64), atol=1e-15)


def test_offset_matrix_is_orthogonal_and_composes():
    m3, m4, m7 = (P.offset_matrix(k, 16) for k in (3, 4, 7))
    np.testing.assert_allclose(m3 @ m3.T, np.eye(16), atol=1e-12)
    np.testing.assert_allclose(m3 @ m4, m7, atol=1e-12)
    with pytest.raises(ValueError, match="even"):
        P.offset_matrix(1, 5)


def test_offset_check_rejects_bad_offset():
    with pytest.raises(ValueError):
        P.check_offset_is_linear(10, 8, 10)


def test_dot_product_depends_only_on_offset():
    enc = P.sinusoidal_encoding(60, 32)
    gram = enc @ enc.T
    for d in range(-20, 21):
        diag = np.diagonal(gram, offset=d)
        assert diag.max() - diag.min() < 1e-12
    # and equals sum_i cos(w_i * d)
    w = P.sinusoid_frequencies(32)
    assert gram[10, 3] == pytest.approx(np.cos(w * 7).sum())


def test_similarity_by_offset_peaks_at_anchor():
    sims = P.similarity_by_offset(P.sinusoidal_encoding(40, 64), anchor=12)
    assert sims.shape == (40,)
    assert sims[12] == pytest.approx(1.0)
    assert np.argmax(sims) == 12


# ------------------------------------------------------------------------------------------------- learned
def test_cosine_similarity_matrix():
    t = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [0.0, 0.0]])
    s = P.cosine_similarity_matrix(t)
    np.testing.assert_allclose(s, s.T)
    np.testing.assert_allclose(np.diag(s)[:3], 1.0)
    assert s[0, 1] == 0.0
    assert s[0, 2] == pytest.approx(1 / math.sqrt(2))
    assert np.all(s[3] == 0)


def _tiny_bert():
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=20, max_position_embeddings=24)
    return BertModel._from_config(cfg, attn_implementation="eager").eval()


def test_learned_position_table_reads_the_model():
    model = _tiny_bert()
    loaded = SimpleNamespace(model=model, spec=SimpleNamespace(name="tiny"))
    table = P.learned_position_table(loaded)
    assert table.shape == (24, 16)
    np.testing.assert_array_equal(table, model.embeddings.position_embeddings.weight.detach().numpy())


def test_learned_position_table_error_names_model():
    loaded = SimpleNamespace(model=torch.nn.Linear(2, 2), spec=SimpleNamespace(name="gpt-x"))
    with pytest.raises(ValueError, match="gpt-x.*no learned position table"):
        P.learned_position_table(loaded)


# -------------------------------------------------------------------------------------------------- rotary
def test_rope_frequencies_exact():
    w = P.rope_frequencies(64, 100000.0)  # the embedded decoder's head size and theta
    assert w.shape == (32,)
    assert w[0] == 1.0
    assert w[1] == pytest.approx(100000.0 ** (-2 / 64))
    assert w[-1] == pytest.approx(100000.0 ** (-62 / 64))
    with pytest.raises(ValueError):
        P.rope_frequencies(5, 10000.0)


def test_rotate_pair_exact():
    np.testing.assert_allclose(P.rotate_pair([1.0, 0.0], math.pi / 2), [0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(P.rotate_pair([2.0, 1.0], math.pi), [-2.0, -1.0], atol=1e-15)


def test_apply_rope_identity_at_zero_and_norm_preserving():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 6, 8))
    out = P.apply_rope(x, np.arange(6), 10000.0)
    np.testing.assert_allclose(out[:, 0], x[:, 0])
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1))


def test_apply_rope_matches_transformers_llama():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    cfg = LlamaConfig(hidden_size=32, num_attention_heads=2, head_dim=16, num_key_value_heads=2,
                      max_position_embeddings=64, rope_parameters={"rope_type": "default", "rope_theta": 100000.0})
    rng = np.random.default_rng(2)
    q = rng.normal(size=(1, 2, 9, 16))
    k = rng.normal(size=(1, 2, 9, 16))
    qt, kt = torch.tensor(q, dtype=torch.float64), torch.tensor(k, dtype=torch.float64)
    cos, sin = LlamaRotaryEmbedding(cfg)(qt, torch.arange(9)[None])
    hf_q, hf_k = apply_rotary_pos_emb(qt, kt, cos, sin)
    np.testing.assert_allclose(P.apply_rope(q, np.arange(9), 100000.0), hf_q.numpy(), atol=1e-5)
    np.testing.assert_allclose(P.apply_rope(k, np.arange(9), 100000.0), hf_k.numpy(), atol=1e-5)


@pytest.mark.parametrize("theta", [10000.0, 100000.0])
def test_rope_scores_depend_only_on_relative_position(theta):
    rng = np.random.default_rng(3)
    check = P.rope_relative_check(rng.normal(size=64), rng.normal(size=64), 40, theta)
    assert check.scores.shape == (40, 40)
    assert check.max_spread < 1e-10
    assert check.scores[5, 2] == pytest.approx(check.scores[30, 27])  # both m - n = 3
    assert set(check.by_offset) == set(range(-39, 40))
    assert len(check.by_offset[0]) == 40 and len(check.by_offset[39]) == 1


def test_rope_settings_from_config():
    from transformers import LlamaConfig
    cfg = LlamaConfig(hidden_size=576, num_attention_heads=9, num_key_value_heads=3, head_dim=64,
                      max_position_embeddings=8192, rope_parameters={"rope_type": "default", "rope_theta": 100000.0})
    loaded = SimpleNamespace(model=SimpleNamespace(config=cfg), spec=SimpleNamespace(name="tiny"))
    s = P.rope_settings(loaded)
    assert s == {"theta": 100000.0, "d_head": 64, "n_heads": 9, "n_kv_heads": 3, "max_positions": 8192,
                 "rope_type": "default"}


# ----------------------------------------------------------------------------------------- relative distance
def test_attention_by_distance_exact():
    w = np.array([[1.0, 0.0, 0.0],
                  [0.5, 0.5, 0.0],
                  [0.2, 0.3, 0.5]])
    d, m = P.attention_by_distance(w)
    np.testing.assert_array_equal(d, [-2, -1, 0, 1, 2])
    np.testing.assert_allclose(m, [0.0, 0.0, (1 + 0.5 + 0.5) / 3, (0.5 + 0.3) / 2, 0.2])


def test_attention_by_distance_keeps_leading_axes():
    rng = np.random.default_rng(4)
    w = rng.random((2, 3, 5, 5))
    d, m = P.attention_by_distance(w)
    assert m.shape == (2, 3, 9)
    assert m[1, 2, 4] == pytest.approx(np.mean(np.diag(w[1, 2])))


def test_mean_by_offset_of_sinusoidal_similarity_is_exact():
    enc = P.sinusoidal_encoding(30, 16)
    offsets, means = P.mean_by_offset(P.cosine_similarity_matrix(enc))
    w = P.sinusoid_frequencies(16)
    # every row has norm sqrt(8), so cosine = sum_i cos(w_i * k) / 8, whatever the position
    np.testing.assert_allclose(means[offsets == 5], np.cos(w * 5).sum() / 8)
    np.testing.assert_allclose(means, means[::-1])  # symmetric in the offset


def test_embedded_models_position_settings(encoder, decoder):
    table = P.learned_position_table(encoder)
    assert table.shape == (512, 384)
    sims = P.cosine_similarity_matrix(table)
    np.testing.assert_allclose(np.diag(sims), 1.0)
    assert P.rope_settings(decoder) == {"theta": 100000.0, "d_head": 64, "n_heads": 9, "n_kv_heads": 3,
                                        "max_positions": 8192, "rope_type": "default"}
    with pytest.raises(ValueError, match="no learned position table"):
        P.learned_position_table(decoder)
    with pytest.raises(ValueError, match="no rotary settings"):
        P.rope_settings(encoder)


# --------------------------------------------------------------------------------------- worked by hand
def test_sinusoidal_and_offset_use_the_base_they_are_given():
    # base 100, d_model 4: pair 1 turns at w = 100 ** (-2/4) = 0.1 rad per position (0.01 with the default base)
    enc = P.sinusoidal_encoding(2, 4, base=100.0)
    np.testing.assert_allclose(enc[1], [math.sin(1), math.cos(1), math.sin(0.1), math.cos(0.1)])
    m = P.offset_matrix(1, 4, base=100.0)
    np.testing.assert_allclose(m[2:, 2:], [[math.cos(0.1), math.sin(0.1)], [-math.sin(0.1), math.cos(0.1)]])
    check = P.check_offset_is_linear(10, 4, 3, base=100.0)
    assert check.offset == 3 and check.max_error < 1e-12
    np.testing.assert_allclose(check.matrix, P.offset_matrix(3, 4, base=100.0))
    np.testing.assert_allclose(check.actual, P.sinusoidal_encoding(10, 4, base=100.0)[3:])
    # the largest valid offset is n - 1 (one position left to move); n itself is refused
    assert P.check_offset_is_linear(10, 4, 9).predicted.shape == (1, 4)
    with pytest.raises(ValueError, match=r"offset must be in \[0, 10\), got 10"):
        P.check_offset_is_linear(10, 4, 10)


def test_cosine_similarity_of_an_integer_table():
    # rows (3,4), (0,0), (4,3), (0,5): unit rows (.6,.8), 0, (.8,.6), (0,1)
    s = P.cosine_similarity_matrix(np.array([[3, 4], [0, 0], [4, 3], [0, 5]]))
    np.testing.assert_allclose(s[0], [1.0, 0.0, 0.96, 0.8])
    np.testing.assert_array_equal(s[1], 0.0)


def test_rotate_pair_by_hand_on_a_batch():
    # cos a = 0.6, sin a = 0.8: (1, 2) -> (0.6 - 1.6, 0.8 + 1.2) = (-1, 2); (3, 0) -> (1.8, 2.4)
    a = math.atan2(0.8, 0.6)
    np.testing.assert_allclose(P.rotate_pair([[1.0, 2.0], [3.0, 0.0]], a), [[-1.0, 2.0], [1.8, 2.4]])
    with pytest.raises(ValueError, match="RoPE needs an even head size, got 5"):
        P.rope_frequencies(5, 10000.0)


def test_rope_check_offsets_are_query_minus_key():
    rng = np.random.default_rng(5)
    check = P.rope_relative_check(rng.normal(size=4), rng.normal(size=4), 3, 10000.0)
    np.testing.assert_array_equal(check.positions, [0, 1, 2])
    s = check.scores
    np.testing.assert_array_equal(check.by_offset[1], [s[1, 0], s[2, 1]])   # query one after the key
    np.testing.assert_array_equal(check.by_offset[-2], [s[0, 2]])


def test_rope_settings_fallbacks():
    """An older config: theta as an attribute, no head_dim, no key/value heads, no position limit, no rope type."""
    old = SimpleNamespace(rope_theta=500000.0, hidden_size=64, num_attention_heads=4)
    loaded = SimpleNamespace(model=SimpleNamespace(config=old), spec=SimpleNamespace(name="old"))
    assert P.rope_settings(loaded) == {"theta": 500000.0, "d_head": 16, "n_heads": 4, "n_kv_heads": 4,
                                       "max_positions": 0, "rope_type": "default"}
    # head_dim wins over hidden_size / heads (32, not 16); rope_parameters wins over the attribute
    new = SimpleNamespace(rope_parameters={"rope_theta": 1000.0, "rope_type": "linear"}, rope_theta=5.0,
                          head_dim=32, hidden_size=64, num_attention_heads=4, num_key_value_heads=1,
                          max_position_embeddings=128)
    loaded = SimpleNamespace(model=SimpleNamespace(config=new), spec=SimpleNamespace(name="new"))
    assert P.rope_settings(loaded) == {"theta": 1000.0, "d_head": 32, "n_heads": 4, "n_kv_heads": 1,
                                       "max_positions": 128, "rope_type": "linear"}
