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


# --- more worked by hand ----------------------------------------------------------------------------------------

def test_softmax_dtype_and_per_row_shift():
    """Rows (0, 1) and (1000, 1001) both give (1, e) / (1 + e): each row is shifted by its OWN maximum. One
    shift for the whole array would push exp(-1000) of the first row to 0 and leave 0/0."""
    x = np.array([[0.0, 1.0], [1000.0, 1001.0]], dtype=np.float32)
    p = maths.softmax(x)
    assert p.dtype == np.float64  # float32 scores, float64 lesson maths
    np.testing.assert_allclose(p, np.array([[1, np.e], [1, np.e]]) / (1 + np.e), rtol=1e-12)
    np.testing.assert_allclose(maths.softmax(x.T, axis=0), p.T, rtol=1e-12)
    assert maths.softmax(np.array([1.0, 2.0]), dtype=np.float32).dtype == np.float32


def test_attention_scores_are_computed_in_the_requested_precision():
    q = np.array([[0.1, 0.2, 0.3]], dtype=np.float32)
    k = np.array([[0.7, 0.11, 0.13]], dtype=np.float32)
    exact = q.astype(np.float64) @ k.T.astype(np.float64) / np.sqrt(3)  # float32 q @ k is off by ~2e-9 here
    np.testing.assert_allclose(maths.attention_scores(q, k), exact, rtol=1e-15)


def test_attention_scale_and_dtype():
    # scale 1 on the worked example: the weights are softmax of the raw scores (row 0: 1, 0, 1)
    _, w = maths.attention(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V, scale=1.0)
    e = np.e
    np.testing.assert_allclose(w[0], [e / (2 * e + 1), 1 / (2 * e + 1), e / (2 * e + 1)])
    out, w = maths.attention(maths.WORKED_Q, maths.WORKED_K, maths.WORKED_V, dtype=np.float32)
    assert out.dtype == np.float32 and w.dtype == np.float32


def test_pool_unequal_bins_by_hand():
    """3 x 5 -> 2 x 2. Row bins: round(linspace(0, 3, 3)) = 0, 2, 3 -> rows {0, 1} and {2}; column bins:
    round(0, 2.5, 5) = 0, 2, 5 -> columns {0, 1} and {2, 3, 4}. m = arange(15): rows {0,1} average to
    (2.5 .. 6.5), row 2 is (10 .. 14); then columns: (3, 5.5) and (10.5, 13)."""
    m = np.arange(15.0).reshape(3, 5)
    pooled = maths.pool(m, 2)
    assert pooled.dtype == np.float32
    np.testing.assert_array_equal(pooled, [[3.0, 5.5], [10.5, 13.0]])
    np.testing.assert_array_equal(maths.pool(m[:2], 2), [[0.5, 3.0], [5.5, 8.0]])  # 2 rows: only columns pool


@pytest.mark.parametrize("by_product", [True, False])
def test_pool_sums_bins_the_same_way_small_or_large(monkeypatch, by_product):
    """Small arrays pool by one matrix product with 0/1 bins, large ones by numpy's reduceat: the hand example
    above either way, and a stack of heads (two leading axes) pools each head alone."""
    monkeypatch.setattr(maths, "POOL_BY_PRODUCT", 10**9 if by_product else 0)
    m = np.arange(15.0).reshape(3, 5)
    np.testing.assert_array_equal(maths.pool(m, 2), [[3.0, 5.5], [10.5, 13.0]])
    heads = np.stack([np.stack([m, 2 * m]), np.stack([m + 1, -m])])        # [2, 2, 3, 5]
    np.testing.assert_array_equal(maths.pool(heads, 2), [[[[3.0, 5.5], [10.5, 13.0]], [[6.0, 11.0], [21.0, 26.0]]],
                                                        [[[4.0, 6.5], [11.5, 14.0]], [[-3.0, -5.5], [-10.5, -13.0]]]])


def test_attention_steps_sum_each_row():
    """q = I, k = ((0, 2), (0, 0)): raw = ((0, 0), (2, 0)), scaled by 1/sqrt 2 -> row sums of exp: 2 and
    e^sqrt2 + 1 (the column sums would be the other way round)."""
    s = maths.attention_steps(np.eye(2), [[0.0, 2.0], [0.0, 0.0]], np.eye(2))
    np.testing.assert_allclose(s["exp_sum"], [2.0, np.exp(np.sqrt(2)) + 1])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exp(1000 / sqrt 2) overflows to inf, quietly; the weights stay exact
        big = maths.attention_steps([[1000.0, 0.0]], [[1000.0, 0.0], [0.0, 0.0]], [[1.0], [0.0]])
    assert np.isinf(big["exp"][0, 0]) and big["weights"][0].tolist() == [1.0, 0.0]


def test_entropy_and_jacobian_are_float64():
    p = np.array([0.5, 0.5], dtype=np.float32)
    assert maths.entropy(p).dtype == np.float64 and maths.softmax_jacobian(p).dtype == np.float64
    np.testing.assert_allclose(maths.softmax_jacobian(p), [[0.25, -0.25], [-0.25, 0.25]])


def test_temperature_softmax_axis_and_message():
    s = np.array([[0.0, 0.0], [np.log(3), 0.0]])
    np.testing.assert_allclose(maths.temperature_softmax(s, 1.0, axis=0), [[0.25, 0.5], [0.75, 0.5]])
    with pytest.raises(ValueError, match="temperature must be positive, got -1"):
        maths.temperature_softmax(s, -1)


def test_random_draws_defaults_and_formulas():
    q, k = maths.random_queries_keys(3, 2, 4)
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(q, rng.standard_normal((2, 3)))
    np.testing.assert_array_equal(k, rng.standard_normal((4, 3)))
    # score_std draws with seed + 1, 4000 pairs by default
    q, k = maths.random_queries_keys(8, 4000, 4000, 3)
    assert maths.score_std(8, seed=2) == float((q * k).sum(-1).std()) == maths.score_std(8, 4000, 2)
    assert maths.score_std(8) == maths.score_std(8, seed=0)
    w = maths.random_projections(4, 2)
    np.testing.assert_array_equal(np.stack(w), (np.random.default_rng(0).standard_normal((3, 4, 2)) / 2)
                                  .astype(np.float32))


def test_saturation_stats_defaults_and_seed():
    s = maths.saturation_stats(4, seed=3)
    assert s == maths.saturation_stats(4, 8, 2000, 3)
    assert maths.saturation_stats(4) == maths.saturation_stats(4, 8, 2000, 0)
    assert s["score_std"] == maths.score_std(4, seed=3)
    q, k = maths.random_queries_keys(4, 2000, 8, 3)
    p = maths.softmax(q @ k.T)
    assert s["entropy_raw"] == pytest.approx(maths.entropy(p).mean(), rel=1e-12)
    curves = maths.saturation_curves((4,), seed=3, n_queries=2000)
    assert {key: v.tolist() for key, v in curves.items()} == {key: [v] for key, v in s.items()}
    default = maths.saturation_curves((2,))
    assert {key: v.tolist() for key, v in default.items()} == {
        key: [v] for key, v in maths.saturation_stats(2, 8, 2000, 0).items()}


def test_self_attention_by_hand():
    """x = I (two tokens, d 2), all projections I, no positions, not standardized: scores (I @ I) / sqrt 2, so
    token 0 gives weight 1 / (1 + e^(-1/sqrt 2)) = 0.6698 to itself. Standardizing would turn the rows into
    (1, -1) and (-1, 1) and the weight into 1 / (1 + e^(-4/sqrt 2)) = 0.9442."""
    eye = np.eye(2)
    own = 1 / (1 + np.exp(-1 / np.sqrt(2)))
    out, w = maths.self_attention(eye, eye, eye, eye)
    assert out.dtype == np.float32
    np.testing.assert_allclose(w[0], [own, 1 - own], rtol=1e-6)
    _, w = maths.self_attention(eye, eye, eye, eye, standardize=True)
    assert w[0, 0] == pytest.approx(1 / (1 + np.exp(-4 / np.sqrt(2))), rel=1e-6)
    # the same tokens as zeros plus position vectors I: position is ADDED, so the values are +I, not -I
    out, w = maths.self_attention(np.zeros((2, 2)), eye, eye, eye, positions=eye)
    np.testing.assert_allclose(out[0], [own, 1 - own], rtol=1e-6)


def test_permutation_gap_is_the_gap_of_the_two_runs():
    x, w = _tokens(n=4, d=8), maths.random_projections(8, 4, seed=2)
    positions = np.random.default_rng(3).normal(size=(6, 8))
    order = [3, 1, 0, 2]
    for standardize in (False, True):
        out, _ = maths.self_attention(x, *w, positions, standardize)
        moved, _ = maths.self_attention(x[order], *w, positions, standardize)
        want = float(np.abs(moved - out[order]).max())
        assert maths.permutation_gap(x, order, *w, positions=positions, standardize=standardize) == want
    assert maths.permutation_gap(x, order, *w, positions=positions) == maths.permutation_gap(
        x, order, *w, positions=positions, standardize=False)


def test_path_and_cost_details():
    assert maths.path_length_matrix(2, "attention").dtype.kind == "i"
    with pytest.raises(ValueError, match="kind must be 'recurrent' or 'attention', got 'cnn'"):
        maths.path_length(0, 1, "cnn")
    t = maths.cost_table([2.0, 3.0])  # floats from a slider are counted as whole tokens
    assert t["n"].dtype == np.int64 and t["n"].tolist() == [2, 3]
    assert t["attention_steps"].tolist() == [1, 1]
    default, bert = maths.cost_table([10]), maths.cost_table([10], d_model=768, n_layers=12, n_heads=12)
    assert {key: v.tolist() for key, v in default.items()} == {key: v.tolist() for key, v in bert.items()}


def test_self_attention_standardizes_each_row_on_its_own():
    """x = ((0, 2), (3, 3)), projections I. Row 0 has mean 1 and variance 1 -> (-1, 1); row 1 is constant, so it
    becomes (0, 0) (the 1e-12 under the square root keeps 0/0 away). Scores z zᵀ / sqrt 2 = ((sqrt 2, 0), (0, 0)):
    token 0 keeps 1 / (1 + e^-sqrt2) = 0.8044 on itself, token 1 splits evenly. A mean or variance over the whole
    matrix (2 and 1.5) or over the columns would give other rows."""
    eye = np.eye(2)
    own = 1 / (1 + np.exp(-np.sqrt(2)))
    out, w = maths.self_attention(np.array([[0.0, 2.0], [3.0, 3.0]]), eye, eye, eye, standardize=True)
    np.testing.assert_allclose(w, [[own, 1 - own], [0.5, 0.5]], rtol=1e-6)
    np.testing.assert_allclose(out, [[-own, own], [-0.5, 0.5]], rtol=1e-6)
