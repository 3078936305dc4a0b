"""From-scratch attention maths: softmax, masks and scaled dot-product attention.

Pure numpy, no model, no Streamlit. The concept labs are built on these functions, and the fidelity check
recomputes a real model's heads with ``attention_weights`` to prove the picture shows what the model computes.
Axes follow the field: ``scores`` are pre-softmax, ``weights`` post-softmax, queries on rows, keys on columns.
"""
from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1, dtype=np.float64) -> np.ndarray:
    """Numerically stable softmax along ``axis``; ``-inf`` entries get weight exactly 0.

    Subtracting the row maximum changes nothing mathematically (softmax is shift-invariant) but keeps ``exp``
    from overflowing. A row that is entirely ``-inf`` is returned as zeros instead of NaN. Computed in ``dtype``
    (float64 for exact lessons; float32 to match a real model's rounding).
    """
    x = np.asarray(x, dtype=dtype)
    peak = np.max(x, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    e = np.exp(x - peak)
    total = e.sum(axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def causal_mask(n_query: int, n_key: int | None = None) -> np.ndarray:
    """Boolean ``(n_query, n_key)`` mask, True where a query may look: key position <= query position."""
    n_key = n_query if n_key is None else n_key
    offset = n_key - n_query  # queries are the last n_query positions of the keys
    return np.tril(np.ones((n_query, n_key), dtype=bool), k=offset)


def weight_on_later_keys(weights: np.ndarray) -> np.ndarray:
    """Per query row of ``weights[..., query, key]`` (self-attention), the weight on keys after the query: exactly
    0 under a causal mask."""
    w = np.asarray(weights)
    return np.where(causal_mask(w.shape[-2], w.shape[-1]), 0.0, w).sum(-1)


def attention_scores(q: np.ndarray, k: np.ndarray, scale: float | None = None,
                     mask: np.ndarray | None = None, dtype=np.float64) -> np.ndarray:
    """Pre-softmax scores ``q @ k.T * scale`` for ``q (..., n_q, d_k)`` and ``k (..., n_k, d_k)``.

    ``scale`` defaults to ``1/sqrt(d_k)``. ``mask`` is boolean, True = may attend; blocked entries become ``-inf``.
    Returns ``(..., n_q, n_k)``.
    """
    q = np.asarray(q, dtype=dtype)
    k = np.asarray(k, dtype=dtype)
    d_k = q.shape[-1]
    scale = dtype(1.0 / np.sqrt(d_k) if scale is None else scale)
    scores = q @ np.swapaxes(k, -1, -2) * scale  # (..., n_q, n_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return scores


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float | None = None,
              mask: np.ndarray | None = None, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention, returning ``(output, weights)``: softmax(q kᵀ · scale + mask) v.

    q ``(..., n_q, d_k)``, k ``(..., n_k, d_k)``, v ``(..., n_k, d_v)`` -> output ``(..., n_q, d_v)`` and
    weights ``(..., n_q, n_k)`` whose rows sum to 1. The one attention function of the labs; ``capture`` holds its
    torch twin for real models (checked equal to this one in the tests).
    """
    weights = softmax(attention_scores(q, k, scale, mask, dtype), axis=-1, dtype=dtype)  # (..., n_q, n_k)
    return weights @ np.asarray(v, dtype=dtype), weights



def pool(matrix: np.ndarray, side: int) -> np.ndarray:
    """Average-pool the last two axes of ``matrix[..., rows, cols]`` to at most ``side`` × ``side``."""
    m = np.asarray(matrix, dtype=np.float32)
    for axis in (-1, -2):   # columns first: along contiguous rows, then over the already pooled rows (2× faster)
        n = m.shape[axis]
        if n > side:
            starts = bin_starts(n, side)
            counts = np.diff(np.append(starts, n)).astype(np.float32)
            if m.size <= POOL_BY_PRODUCT:   # one matrix product with 0/1 bins, not one small sum per bin
                member = np.zeros((n, len(starts)), dtype=np.float32)
                member[np.arange(n), np.searchsorted(starts, np.arange(n), side="right") - 1] = 1.0
                sums = np.moveaxis(np.moveaxis(m, axis, -1) @ member, -1, axis)
            else:
                sums = np.add.reduceat(m, starts, axis=axis)
            m = sums / counts.reshape((-1, 1) if axis == -2 else (-1,))
    return m


POOL_BY_PRODUCT = 2**20   # cells. A 32-token decoder text (30 x 9 heads): 2.8 ms by reduceat, 0.7 ms by product;
# 512 tokens (6 x 12 heads): 17 ms by reduceat, 25 ms by product (48 times the additions)


def bin_starts(n: int, side: int) -> np.ndarray:
    """First position of each of ``min(n, side)`` near-equal bins over ``n`` positions."""
    return np.linspace(0, n, min(n, side) + 1).round().astype(int)[:-1]


# --- The worked example: three tokens, d_k = 2 -------------------------------------------------------------------

#: The three-token example (rows are tokens 1..3): small enough to check by hand.
WORKED_Q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
WORKED_K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
WORKED_V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])


def attention_steps(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray | float]:
    """Every intermediate of unmasked scaled dot-product attention, for showing the steps one by one.

    Returns ``raw = QK^T (n_q, n_k)``, ``sqrt_d_k``, ``scaled = raw / sqrt_d_k``, ``exp = exp(scaled)`` (not
    shifted, so the numbers are the familiar ones; the weights come from the stable :func:`softmax`),
    ``exp_sum (n_q,)``, ``weights (n_q, n_k)`` and ``output = weights @ V (n_q, d_v)``.
    """
    q, k, v = (np.asarray(m, dtype=np.float64) for m in (q, k, v))
    raw = attention_scores(q, k, scale=1.0)
    sqrt_d_k = float(np.sqrt(q.shape[-1]))
    scaled = raw / sqrt_d_k
    weights = softmax(scaled)
    with np.errstate(over="ignore"):
        exp = np.exp(scaled)
    return {"raw": raw, "sqrt_d_k": sqrt_d_k, "scaled": scaled, "exp": exp, "exp_sum": exp.sum(axis=-1),
            "weights": weights, "output": weights @ v}


# --- Softmax saturation: why the scores are divided by sqrt(d_k) ----------------------------------------------

#: d_k values on a log scale, 1 .. 1024, for sliders and curves.
LOG_DK: tuple[int, ...] = tuple(2 ** i for i in range(11))


def entropy(p: np.ndarray, axis: int = -1, dtype=np.float64) -> np.ndarray:
    """Shannon entropy in nats of the distributions along ``axis`` (``0 * log 0`` counts as 0).

    A uniform row over ``n`` keys has entropy ``log n``; a one-hot row has entropy 0.
    """
    p = np.asarray(p, dtype=dtype)
    terms = np.maximum(p, np.finfo(p.dtype).tiny)   # log of a zero weight: finite, and 0 × it adds 0
    np.log(terms, out=terms)                        # in place, unmasked: a 512-token result's 19 M terms in
    terms *= p                                      # ~60 ms instead of ~100 ms with a masked log
    return -terms.sum(axis=axis)


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """Jacobian ``d softmax_i / d score_j = p_i (delta_ij - p_j)`` of softmax rows ``p (..., n)`` -> ``(..., n, n)``."""
    p = np.asarray(p, dtype=np.float64)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def softmax_gradient_size(p: np.ndarray) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian per row ``(..., n)`` -> ``(...)``.

    It measures how much the weights can still move when the scores move: about ``1/sqrt(n)`` for a uniform row
    and exactly 0 for a one-hot row, which is why a saturated softmax stops passing gradient back to the scores.
    """
    return np.sqrt((softmax_jacobian(p) ** 2).sum(axis=(-2, -1)))


def temperature_softmax(scores: np.ndarray, temperature: float, axis: int = -1) -> np.ndarray:
    """``softmax(scores / temperature)``. Below 1 the rows sharpen towards one-hot, above 1 they flatten.

    ``-inf`` (masked) entries stay at weight 0 for every positive temperature.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    return softmax(np.asarray(scores, dtype=np.float64) / temperature, axis=axis)


def random_queries_keys(d_k: int, n_queries: int, n_keys: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded queries ``(n_queries, d_k)`` and keys ``(n_keys, d_k)`` with independent N(0, 1) components."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_queries, d_k)), rng.standard_normal((n_keys, d_k))


def score_std(d_k: int, n_pairs: int = 4000, seed: int = 0) -> float:
    """Measured standard deviation of ``q . k`` over ``n_pairs`` independent unit-variance pairs (about sqrt(d_k))."""
    q, k = random_queries_keys(d_k, n_pairs, n_pairs, seed + 1)
    return float(np.einsum("nd,nd->n", q, k).std())


def saturation_stats(d_k: int, n_keys: int = 8, n_queries: int = 2000, seed: int = 0) -> dict[str, float]:
    """Measure what unit-variance ``q . k`` scores do to a softmax at one ``d_k``.

    Draws ``n_queries`` random queries against ``n_keys`` random keys and returns means over the queries:
    ``score_std`` (:func:`score_std`, to compare with ``sqrt_d_k``), and for the raw
    scores (``*_raw``) and the scores divided by ``sqrt(d_k)`` (``*_scaled``): ``entropy`` (nats), ``max_weight``
    and ``grad`` (:func:`softmax_gradient_size`).
    """
    q, k = random_queries_keys(d_k, n_queries, n_keys, seed)
    raw = attention_scores(q, k, scale=1.0)  # (n_queries, n_keys)
    stats = {"d_k": float(d_k), "score_std": score_std(d_k, seed=seed), "sqrt_d_k": float(np.sqrt(d_k))}
    for name, scores in (("raw", raw), ("scaled", raw / np.sqrt(d_k))):
        p = softmax(scores)
        stats[f"entropy_{name}"] = float(entropy(p).mean())
        stats[f"max_weight_{name}"] = float(p.max(axis=-1).mean())
        stats[f"grad_{name}"] = float(softmax_gradient_size(p).mean())
    return stats


def saturation_curves(d_ks=LOG_DK, n_keys: int = 8, n_queries: int = 2000, seed: int = 0) -> dict[str, np.ndarray]:
    """:func:`saturation_stats` for every ``d_k`` in ``d_ks``, as columns (name -> array over ``d_ks``)."""
    rows = [saturation_stats(d, n_keys, n_queries, seed) for d in d_ks]
    return {key: np.array([row[key] for row in rows]) for key in rows[0]}


# --- Permutation: attention without positions cannot see order -------------------------------------------------

def random_projections(d_model: int, d_k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded ``W_Q, W_K, W_V`` of shape ``(d_model, d_k)`` (N(0, 1/d_model) entries, float32 like real weights)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, d_model, d_k)) / np.sqrt(d_model)
    return tuple(m.astype(np.float32) for m in w)


def self_attention(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                   positions: np.ndarray | None = None, standardize: bool = False,
                   dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """One self-attention head from scratch on token vectors ``x (n, d_model)``, returning ``(output, weights)``.

    ``positions (n, d_model)``, if given, is added to ``x`` first (row i gets position i, whatever token sits
    there). ``standardize`` then rescales each row to mean 0, variance 1, as the layer norm a BERT applies to its
    embeddings does, so that raw embedding-table rows give scores of a useful size. Computed in ``dtype`` (float32,
    like a real model), so rounding differences are ~1e-7, not ~1e-16.
    Output ``(n, d_k)``, weights ``(n, n)``.
    """
    x = np.asarray(x, dtype=dtype)
    if positions is not None:
        x = x + np.asarray(positions, dtype=dtype)[: len(x)]
    if standardize:
        x = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + dtype(1e-12))
    q, k, v = (x @ np.asarray(w, dtype=dtype) for w in (w_q, w_k, w_v))  # each (n, d_k)
    return attention(q, k, v, dtype=dtype)


def inverse_permutation(order) -> np.ndarray:
    """``inv`` with ``inv[order[i]] = i``: where each original position went."""
    order = np.asarray(order)
    inv = np.empty_like(order)
    inv[order] = np.arange(len(order))
    return inv


def permutation_gap(x: np.ndarray, order, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                    positions: np.ndarray | None = None, standardize: bool = False) -> float:
    """Largest absolute difference between attention on the shuffled tokens ``x[order]`` and the original
    outputs shuffled the same way. About float32 rounding (~1e-7) without positions (attention is permutation
    equivariant); large once ``positions`` are added, because a token's position vector changes when it moves.
    """
    order = np.asarray(order)
    out, _ = self_attention(x, w_q, w_k, w_v, positions, standardize)
    out_shuffled, _ = self_attention(np.asarray(x)[order], w_q, w_k, w_v, positions, standardize)
    return float(np.abs(out_shuffled - out[order]).max())


# --- Why attention: path length and cost ------------------------------------------------------------------------

def path_length(i: int, j: int, kind: str) -> int:
    """Steps information needs from position ``i`` to ``j``: ``|i - j|`` for a recurrent model (one state update
    per token), 1 for self-attention (every position reads every other directly), 0 when ``i == j``."""
    if kind == "recurrent":
        return abs(i - j)
    if kind == "attention":
        return int(i != j)
    raise ValueError(f"kind must be 'recurrent' or 'attention', got {kind!r}")


def path_length_matrix(n: int, kind: str) -> np.ndarray:
    """``(n, n)`` integer matrix of :func:`path_length` for every pair of positions."""
    i, j = np.indices((n, n))
    if kind == "recurrent":
        return np.abs(i - j)
    if kind == "attention":
        return (i != j).astype(int)
    raise ValueError(f"kind must be 'recurrent' or 'attention', got {kind!r}")


def cost_table(ns, d_model: int = 768, n_layers: int = 12, n_heads: int = 12,
               bytes_per_value: int = 4) -> dict[str, np.ndarray]:
    """Per-sequence costs as the length ``n`` grows, for a stack shaped like BERT-base by default.

    Columns (arrays over ``ns``): ``n``; ``score_entries`` = n^2, the size of one head's attention matrix;
    ``attention_memory_bytes`` = n_layers * n_heads * n^2 * bytes_per_value, the weights kept for the backward
    pass; ``attention_macs`` = n^2 * d_model, the leading-order multiply-adds per layer of comparing every pair
    (QK^T; the weighted sum of V costs the same again) against ``recurrent_macs`` = n * d_model^2, one d x d state
    update per token (constants dropped in both, so they cross at n = d_model); ``recurrent_steps`` = n
    sequential steps against ``attention_steps`` = 1.
    """
    n = np.asarray(ns, dtype=np.int64)
    return {
        "n": n,
        "score_entries": n ** 2,
        "attention_memory_bytes": n_layers * n_heads * n ** 2 * bytes_per_value,
        "attention_macs": n ** 2 * d_model,
        "recurrent_macs": n * d_model ** 2,
        "recurrent_steps": n,
        "attention_steps": np.ones_like(n),
    }
