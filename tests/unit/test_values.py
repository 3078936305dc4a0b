"""Value-weighted attention on tiny models: Σ_j alpha_ij f(x_j) is exactly the head's share of the attention
output, and the sink statistics are pinned on a hand-made example."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from tiny import TEXT

from explorer.heads_do import knockout, values


def _apply(proj, x):
    w = proj.weight
    return x @ (w.T if isinstance(proj, torch.nn.Linear) else w)   # without the bias


def head_outputs_match(loaded, text, atol):
    """For every layer and head: Σ_j alpha_ij f(x_j) == W_O applied to the projection input with every other
    head's slice zeroed (bias left out). Returns the largest difference."""
    _, projs = knockout.attention_layers(loaded.model)
    n = knockout.n_heads_of(loaded.model)
    inputs = {}
    handles = [p.register_forward_pre_hook(lambda m, a, i=i: inputs.__setitem__(i, a[0][0].clone()))
               for i, p in enumerate(projs)]
    try:
        result, vals = values.record_values(loaded, text)
    finally:
        for h in handles:
            h.remove()
    worst = 0.0
    for layer, proj in enumerate(projs):
        f = values.transformed_values(vals[layer], proj, n).double()          # (H, T, d_model)
        alpha = torch.from_numpy(result.weights[layer]).double()               # (H, Q, K)
        ours = torch.einsum("hqk,hkm->hqm", alpha, f)
        d = inputs[layer].shape[-1] // n
        for head in range(n):
            x = torch.zeros_like(inputs[layer])
            x[:, head * d:(head + 1) * d] = inputs[layer][:, head * d:(head + 1) * d]
            theirs = _apply(proj, x).double()
            worst = max(worst, (ours[head] - theirs).abs().max().item())
    assert worst <= atol, worst
    return worst


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_value_weighted_sum_is_the_head_output(tiny_loaded, family):
    head_outputs_match(tiny_loaded(family), TEXT, 1e-5)


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_norms_are_weight_times_transformed_value_size(tiny_loaded, family):
    loaded = tiny_loaded(family)
    vw = values.value_weighted(loaded, TEXT)
    n_layers, n_heads, n_q, n_k = vw.result.weights.shape
    assert vw.norms.shape == (n_layers, n_heads, n_q, n_k) and vw.f_norms.shape == (n_layers, n_heads, n_k)
    _, vals = values.record_values(loaded, TEXT)
    _, projs = knockout.attention_layers(loaded.model)
    f = values.transformed_values(vals[1], projs[1], n_heads)            # (H, T, d_model)
    i, j, h = n_q - 1, 2, 3
    direct = torch.linalg.vector_norm(float(vw.result.weights[1, h, i, j]) * f[h, j]).item()
    assert vw.norms[1, h, i, j] == pytest.approx(direct, rel=1e-5)
    np.testing.assert_allclose(vw.normalised.sum(-1), 1.0, atol=1e-5)
    if family != "bert":
        assert np.all(vw.norms[..., np.triu_indices(n_q, 1)[0], np.triu_indices(n_q, 1)[1]] == 0)   # causal


def test_grouped_query_heads_share_value_vectors(tiny_loaded):
    loaded = tiny_loaded("llama")                 # 4 query heads, 2 key/value heads
    vw = values.value_weighted(loaded, TEXT)
    assert loaded.model.config.num_key_value_heads == 2
    _, vals = values.record_values(loaded, TEXT)
    assert vals[0].shape == (len(vw.result.tokens), 2 * 8)
    # heads 0 and 1 read value head 0 but have different W_O slices, so their f norms differ
    assert not np.allclose(vw.f_norms[0, 0], vw.f_norms[0, 1])


def test_sink_stats_hand_computed():
    # one layer, one head, two queries, three keys; key 0 is special
    weights = np.array([[[[0.5, 0.5, 0.0], [0.6, 0.2, 0.2]]]], dtype=np.float32)
    f_norms = np.array([[[0.1, 1.0, 2.0]]], dtype=np.float32)
    result = SimpleNamespace(weights=weights, keys_special=np.array([True, False, False]))
    vw = values.ValueWeighted(result, weights * f_norms[:, :, None, :], f_norms)
    stats = values.sink_stats(vw)
    assert stats.loc[0, "sink_weight"] == pytest.approx((0.5 + 0.6) / 2)
    # row 0: 0.05 / (0.05 + 0.5) ; row 1: 0.06 / (0.06 + 0.2 + 0.4)
    assert stats.loc[0, "sink_value"] == pytest.approx((0.05 / 0.55 + 0.06 / 0.66) / 2, rel=1e-6)
    no_special = SimpleNamespace(weights=weights, keys_special=np.zeros(3, dtype=bool))   # first token is the sink
    assert values.sink_stats(values.ValueWeighted(no_special, vw.norms, f_norms)).loc[0, "sink_weight"] == \
        pytest.approx(0.55)


def test_value_hooks_are_installed_once(tiny_loaded):
    loaded = tiny_loaded("gpt2")
    values.value_weighted(loaded, TEXT)
    values.value_weighted(loaded, TEXT)
    layers, _ = knockout.attention_layers(loaded.model)
    assert [len(layer.attn.c_attn._forward_hooks) for layer in layers] == [1, 1]
    _, vals = values.record_values(loaded, TEXT)
    assert len(vals) == 2 and vals[0].shape[-1] == 32     # the value third of c_attn's q | k | v output


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_decomposition_error_agrees_with_the_explicit_check(tiny_loaded, family):
    loaded = tiny_loaded(family)
    explicit = head_outputs_match(loaded, TEXT, 1e-5)
    assert values.decomposition_error(loaded, TEXT) == pytest.approx(explicit, abs=2e-6)
    assert values.decomposition_error(loaded, TEXT) <= 1e-5
