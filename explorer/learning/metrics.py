"""Small named measures of heads, on plain arrays, each with the field's standard definition.

On attention patterns (``weights[..., query, key]``, rows summing to 1):
- previous-token score: the mean weight a token puts on the token right before it (a perfect previous-token head
  scores 1; a head spread evenly over n keys scores 1/n);
- prefix-matching score: the mean weight a token of a second copy puts on the token right after its own first
  occurrence (Olsson et al. 2022) — where an induction head looks.
On weights (row-vector convention, x a row of the residual stream: a head scores ``x_q W_QK x_kᵀ`` and writes
``x W_OV``, with ``W_QK = W_Q W_Kᵀ`` and ``W_OV = W_V W_O``, each ``[d_model, d_model]``):
- K-composition of a later head 2 reading an earlier head 1 in its keys (Elhage et al. 2021):
  ‖W_QK² W_OV¹ᵀ‖_F / (‖W_QK²‖_F ‖W_OV¹‖_F), compared against the same score for random matrices of the same shapes;
- copying score of a token-to-token circuit M (e.g. W_E W_OV W_U): Re Σλ / Σ|λ| over M's eigenvalues, 1 for a
  circuit that only copies (positive eigenvalues), −1 for one that only suppresses.
"""
from __future__ import annotations

import numpy as np


def previous_token_score(weights: np.ndarray) -> np.ndarray:
    """``weights[..., T, T]`` → ``[...]``: the mean over queries 1 … T−1 of the weight on key query − 1."""
    weights = np.asarray(weights, dtype=np.float64)
    return np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)


def prefix_matching_score(weights: np.ndarray, queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``weights[..., T, T]`` → ``[...]``: the mean of ``weights[..., queries[i], keys[i]]`` over the pairs i (a
    second-copy token and the position right after the same token's first occurrence)."""
    weights = np.asarray(weights, dtype=np.float64)
    return weights[..., np.asarray(queries), np.asarray(keys)].mean(axis=-1)


def _frobenius(m: np.ndarray) -> float:
    return float(np.linalg.norm(m, ord="fro"))


def k_composition(w_qk: np.ndarray, w_ov: np.ndarray) -> float:
    """How much of a later head's QK circuit ``w_qk`` reads (on its key side) what an earlier head's OV circuit
    ``w_ov`` writes: ‖w_qk w_ovᵀ‖_F / (‖w_qk‖_F ‖w_ov‖_F), between 0 and 1; 0 when either is all zeros (a head that
    writes nothing, or reads nothing, composes with nothing)."""
    norms = _frobenius(w_qk) * _frobenius(w_ov)
    return _frobenius(w_qk @ w_ov.T) / norms if norms > 0 else 0.0


def aligned_k_composition(w_qk: np.ndarray, w_ov: np.ndarray) -> float:
    """The most :func:`k_composition` can be for matrices with these singular values, reached when the largest
    directions of one meet the largest of the other: √(Σ σᵢ² τᵢ²) / (‖σ‖ ‖τ‖), both sorted. Spread over r equal
    directions it is 1/√r, which is why a wide head composing perfectly still scores far below 1."""
    s_qk, s_ov = np.linalg.svd(w_qk, compute_uv=False), np.linalg.svd(w_ov, compute_uv=False)
    n = min(len(s_qk), len(s_ov))
    if not (np.linalg.norm(s_qk) and np.linalg.norm(s_ov)):
        return 0.0
    return float(np.sqrt((s_qk[:n] ** 2 * s_ov[:n] ** 2).sum()) / (np.linalg.norm(s_qk) * np.linalg.norm(s_ov)))


def random_k_composition(d_model: int, d_head: int, samples: int = 200, seed: int = 0) -> float:
    """The mean K-composition of heads with random Gaussian weights of the same shapes: what "no composition" scores
    for this width (it is not 0, since two random matrices of rank ``d_head`` overlap a little)."""
    rng = np.random.default_rng(seed)
    scores = []
    for _ in range(samples):
        w_q, w_k, w_v, w_o = (rng.standard_normal(s) for s in ((d_model, d_head), (d_model, d_head),
                                                               (d_model, d_head), (d_head, d_model)))
        scores.append(k_composition(w_q @ w_k.T, w_v @ w_o))
    return float(np.mean(scores))


def copying_score(circuit: np.ndarray) -> float:
    """Re Σλ / Σ|λ| over the eigenvalues λ of a square token-to-token circuit (Elhage et al. 2021)."""
    eig = np.linalg.eigvals(np.asarray(circuit, dtype=np.float64))
    return float(eig.sum().real / np.abs(eig).sum())


def diagonal_share(circuit: np.ndarray) -> float:
    """The share of rows (input tokens) whose largest entry is on the diagonal: "reading token t, raise t most"."""
    circuit = np.asarray(circuit)
    return float((circuit.argmax(axis=1) == np.arange(circuit.shape[0])).mean())


def phase_change(steps: np.ndarray, best_prefix: np.ndarray, loss_first: np.ndarray, loss_second: np.ndarray,
                 prefix_at: float = 0.5, loss_ratio: float = 0.5) -> int | None:
    """The first recorded step at which the best later-layer head's prefix-matching score reaches ``prefix_at`` and
    the loss on the second copy is at most ``loss_ratio`` × the loss on the first; None if no step does."""
    hit = (np.asarray(best_prefix) >= prefix_at) & (np.asarray(loss_second) <= loss_ratio * np.asarray(loss_first))
    where = np.flatnonzero(hit)
    return int(np.asarray(steps)[where[0]]) if where.size else None
