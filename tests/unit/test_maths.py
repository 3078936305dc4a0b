"""Unit tests of explorer.maths: exact values (the seeds' numbers among them) and invariants."""
import numpy as np
import pytest

from explorer import maths
from explorer.labs.notation import latex_matrix, latex_weighted_sum

# --- softmax, masks, attention (the core) ----------------------------------------------------------------------

def test_softmax_seed_examples():
    np.testing.assert_allclose(maths.softmax([1.0, 2.0, 3.0]).round(3), [0.090, 0.245, 0.665])
    hot = maths.softmax([8.0, 16.0, 24.0])
    # the seed prints [0.0000001, 0.0003, 0.9997]: the first weight is e^-16 / (1 + e^-8 + e^-16) = 1.125e-7
    assert f"{hot[0]:.7f}" == "0.0000001"
    np.testing.assert_allclose(hot.round(4), [0.0000, 0.0003, 0.9997])
    assert hot[0] == pytest.approx(np.exp(-16) / (1 + np.exp(-8) + np.exp(-16)))


@pytest.mark.parametrize("seed", range(5))
def test_softmax_rows_sum_to_one_and_shift_invariant(seed):
    x = np.random.default_rng(seed).normal(scale=5, size=(4, 7))
    p = maths.softmax(x)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)
    assert (p > 0).all()
    np.testing.assert_allclose(maths.softmax(x + 123.4), p, atol=1e-12)
    np.testing.assert_allclose(maths.softmax(x + np.arange(4)[:, None]), p, atol=1e-12)  # a shift per row


def test_softmax_large_scores_do_not_overflow_and_minus_inf_is_zero():
    p = maths.softmax([1000.0, 1000.0, -np.inf])
    np.testing.assert_array_equal(p, [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(maths.softmax([-np.inf, -np.inf]), [0.0, 0.0])


def test_causal_mask():
    np.testing.assert_array_equal(maths.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(maths.causal_mask(1, 3), [[1, 1, 1]])  # the last query sees every key
    # fewer queries than keys: the queries are the last positions (query 0 is position 2 of 4)
    np.testing.assert_array_equal(maths.causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])
    q = np.random.default_rng(0).normal(size=(4, 2))
    _, w = maths.attention(q, q, q, mask=maths.causal_mask(4))
    assert (np.triu(w, 1) == 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0)


# --- the worked example -----------------------------------------------------------------------------------------

def test_worked_example_matches_the_seed():
    s = maths.attention_steps(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V)
    np.testing.assert_array_equal(s["raw"], [[1, 0, 1], [0, 1, 1], [1, 1, 2]])
    assert round(s["sqrt_d_k"], 3) == 1.414
    np.testing.assert_array_equal(s["scaled"][0].round(3), [0.707, 0.0, 0.707])
    np.testing.assert_array_equal(s["scaled"][2].round(3), [0.707, 0.707, 1.414])
    np.testing.assert_array_equal(s["exp"][0].round(3), [2.028, 1.0, 2.028])
    assert round(s["exp_sum"][0], 3) == 5.056
    np.testing.assert_array_equal(s["weights"][0].round(3), [0.401, 0.198, 0.401])
    np.testing.assert_array_equal(s["output"][0].round(3), [0.802, 0.797])
    out, w = maths.attention(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V)
    np.testing.assert_allclose(out, s["output"])
    np.testing.assert_allclose(w, s["weights"])


def test_worked_example_latex_shows_the_seed_numbers():
    s = maths.attention_steps(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V)
    assert latex_matrix(s["weights"][0]) == r"\begin{bmatrix}0.401 & 0.198 & 0.401\end{bmatrix}"
    text = latex_weighted_sum(s["weights"][0], maths.WORKED_V)
    assert text.startswith(r"0.401\,\begin{bmatrix}1 & 0\end{bmatrix} + 0.198\,\begin{bmatrix}0 & 2\end{bmatrix}")
    assert text.endswith(r"= \begin{bmatrix}0.802 & 0.797\end{bmatrix}")


# --- saturation -------------------------------------------------------------------------------------------------

def test_entropy_exact():
    assert maths.entropy([0.25] * 4) == pytest.approx(np.log(4))
    assert maths.entropy([1.0, 0.0, 0.0]) == 0.0
    assert maths.entropy([0.5, 0.5]) == pytest.approx(np.log(2))


def test_softmax_gradient_size_exact():
    # uniform over n: J = I/n - 1/n^2, Frobenius norm sqrt(n-1)/n
    assert maths.softmax_gradient_size(np.full(4, 0.25)) == pytest.approx(np.sqrt(3) / 4)
    assert maths.softmax_gradient_size(np.array([1.0, 0.0, 0.0])) == 0.0
    # the Jacobian matches finite differences
    x = np.array([0.3, -1.2, 2.0])
    eps = 1e-6
    numeric = np.stack([(maths.softmax(x + eps * e) - maths.softmax(x - eps * e)) / (2 * eps) for e in np.eye(3)], 1)
    np.testing.assert_allclose(maths.softmax_jacobian(maths.softmax(x)), numeric, atol=1e-8)


def test_seed_saturated_softmax_has_almost_no_gradient():
    mild = maths.softmax_gradient_size(maths.softmax([1.0, 2.0, 3.0]))
    hot = maths.softmax_gradient_size(maths.softmax([8.0, 16.0, 24.0]))
    assert mild > 0.3 and hot < 1e-3 and mild / hot > 500


def test_temperature_softmax():
    s = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, -np.inf]])
    np.testing.assert_allclose(maths.temperature_softmax(s, 1.0), maths.softmax(s))
    np.testing.assert_allclose(maths.temperature_softmax(s, 1 / 8)[0], maths.softmax([8.0, 16.0, 24.0]))
    assert maths.temperature_softmax(s, 0.01)[0, 2] == pytest.approx(1.0)
    np.testing.assert_allclose(maths.temperature_softmax(s, 1e4)[0], 1 / 3, atol=1e-3)
    assert maths.temperature_softmax(s, 0.05)[1, 2] == 0.0
    with pytest.raises(ValueError):
        maths.temperature_softmax(s, 0.0)


def test_score_std_grows_like_sqrt_dk_and_scaling_fixes_it():
    curves = maths.saturation_curves(maths.LOG_DK, n_queries=500)
    np.testing.assert_array_equal(curves["d_k"], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
    np.testing.assert_allclose(curves["score_std"] / curves["sqrt_d_k"], 1.0, atol=0.15)
    assert curves["max_weight_raw"][-1] > 0.9 > 0.5 > curves["max_weight_scaled"][-1]
    assert curves["entropy_raw"][-1] < 0.3 and curves["entropy_scaled"][-1] > 1.5
    assert curves["grad_raw"][-1] < 0.1 < 0.3 < curves["grad_scaled"][-1]
    # d_k = 1: dividing by sqrt(1) changes nothing
    assert curves["entropy_raw"][0] == curves["entropy_scaled"][0]
    # the scaled statistics do not drift with d_k
    assert np.ptp(curves["entropy_scaled"][2:]) < 0.2


def test_saturation_is_seeded():
    assert maths.saturation_stats(64, seed=3) == maths.saturation_stats(64, seed=3)
    assert maths.saturation_stats(64, seed=3) != maths.saturation_stats(64, seed=4)


# --- permutation ------------------------------------------------------------------------------------------------

def _tokens(n=5, d=16, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def test_inverse_permutation():
    order = np.array([2, 0, 3, 1])
    inv = maths.inverse_permutation(order)
    np.testing.assert_array_equal(order[inv], np.arange(4))
    np.testing.assert_array_equal(inv[order], np.arange(4))


@pytest.mark.parametrize("order", [[2, 1, 0, 3, 4], [4, 3, 2, 1, 0], [1, 2, 3, 4, 0]])
def test_permutation_equivariance_without_positions(order):
    x, w = _tokens(), maths.random_projections(16, 8, seed=1)
    out, weights = maths.self_attention(x, *w)
    out_p, weights_p = maths.self_attention(x[order], *w)
    np.testing.assert_allclose(out_p, out[order], atol=1e-5)
    np.testing.assert_allclose(weights_p, weights[np.ix_(order, order)], atol=1e-6)
    assert maths.permutation_gap(x, order, *w) < 1e-5
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("order", [[2, 1, 0, 3, 4], [1, 2, 3, 4, 0]])
def test_permutation_equivariance_fails_with_positions(order):
    x, w = _tokens(), maths.random_projections(16, 8, seed=1)
    positions = np.random.default_rng(7).normal(size=(10, 16))
    assert maths.permutation_gap(x, order, *w, positions=positions) > 1e-2


def test_identity_order_and_float64_gap_are_exact():
    x, w = _tokens(), maths.random_projections(16, 8)
    assert maths.permutation_gap(x, range(5), *w) == 0.0
    out, _ = maths.self_attention(x, *w, dtype=np.float64)
    assert out.dtype == np.float64


def test_random_projections_seeded():
    a, b = maths.random_projections(8, 4, seed=5), maths.random_projections(8, 4, seed=5)
    for m, n in zip(a, b):
        np.testing.assert_array_equal(m, n)
        assert m.shape == (8, 4) and m.dtype == np.float32


# --- path length and cost ---------------------------------------------------------------------------------------

def test_path_length():
    assert maths.path_length(2, 23, "recurrent") == 21
    assert maths.path_length(2, 23, "attention") == 1
    assert maths.path_length(5, 5, "attention") == 0 == maths.path_length(5, 5, "recurrent")
    r, a = maths.path_length_matrix(4, "recurrent"), maths.path_length_matrix(4, "attention")
    np.testing.assert_array_equal(r, [[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]])
    np.testing.assert_array_equal(a, 1 - np.eye(4, dtype=int))
    with pytest.raises(ValueError):
        maths.path_length(0, 1, "convolution")


def test_cost_table_exact():
    t = maths.cost_table([512, 1024], d_model=768, n_layers=12, n_heads=12)
    np.testing.assert_array_equal(t["score_entries"], [262_144, 1_048_576])
    assert t["attention_memory_bytes"][0] == 12 * 12 * 512 ** 2 * 4 == 150_994_944
    assert t["score_entries"][1] / t["score_entries"][0] == 4  # doubling n quadruples the matrix
    np.testing.assert_array_equal(t["attention_macs"], [512 ** 2 * 768, 1024 ** 2 * 768])
    np.testing.assert_array_equal(t["recurrent_macs"], [512 * 768 ** 2, 1024 * 768 ** 2])
    np.testing.assert_array_equal(t["recurrent_steps"], [512, 1024])
    np.testing.assert_array_equal(t["attention_steps"], [1, 1])
    # attention costs more arithmetic exactly when n > d
    t = maths.cost_table([767, 768, 769], d_model=768)
    assert list(np.sign(t["attention_macs"] - t["recurrent_macs"])) == [-1, 0, 1]
