"""Moving a head's keys and queries into one picture without changing its attention (AttentionViz's alignment).

Queries and keys of a head usually form two clouds far apart, so a joint map would show two blobs. Two changes,
neither of which moves a single attention weight, bring them together:

- **shift**: add one vector ``v`` to every key, so that the keys' mean equals the queries' mean. A query's score
  for key k becomes q·(k + v) = q·k + q·v: the same amount q·v is added to all its scores, and softmax ignores a
  constant added to a whole row.
- **scale**: multiply every query by ``c`` and divide every key by ``c``, with c chosen so that both have the same
  mean length. (c q)·(k / c) = q·k: every score is unchanged.

``weight_change`` recomputes every sentence's attention before and after and returns the largest difference, the
number the page shows (about 1e-16: float64 rounding).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.maths import attention_scores, causal_mask, softmax


@dataclass(frozen=True)
class Alignment:
    """What ``align`` did: ``shift`` ``[d_head]`` added to every key, ``scale`` c (queries × c, keys ÷ c), and the
    mean lengths of queries and keys before and after (after both are equal)."""
    shift: np.ndarray
    scale: float
    query_norm: tuple[float, float]
    key_norm: tuple[float, float]

    def apply(self, q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Other queries ``[n_q, d]`` and keys ``[n_k, d]`` moved the same way (float64): queries × c, keys
        shifted then ÷ c, the same operations as ``align`` (so the corpus's own points come out bit-identical)."""
        return (np.asarray(q, dtype=np.float64) * self.scale,
                (np.asarray(k, dtype=np.float64) + self.shift) / self.scale)


def align(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, Alignment]:
    """Shifted and scaled copies of queries ``q [n_q, d]`` and keys ``k [n_k, d]`` (float64), and what was done.

    The shift is ``mean(q) − mean(k)`` (keys move onto the queries' centre); then c = sqrt(mean|k'| / mean|q|).
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    shift = q.mean(axis=0) - k.mean(axis=0)
    shifted = k + shift                                                   # (n_k, d)
    q_norm, k_norm = float(np.linalg.norm(q, axis=1).mean()), float(np.linalg.norm(shifted, axis=1).mean())
    c = float(np.sqrt(k_norm / q_norm)) if q_norm > 0 and k_norm > 0 else 1.0
    info = Alignment(shift=shift, scale=c, query_norm=(q_norm, q_norm * c),
                     key_norm=(float(np.linalg.norm(k, axis=1).mean()), k_norm / c))
    return q * c, shifted / c, info


def sentence_weights(q: np.ndarray, k: np.ndarray, scale: float, causal: bool) -> np.ndarray:
    """Attention ``[query, key]`` of one sentence from its queries ``[T, d]`` and keys ``[T, d]`` (float64)."""
    mask = causal_mask(len(q), len(k)) if causal else None
    return softmax(attention_scores(q, k, scale, mask))


def _packed(x: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """Points ``[n, d]`` as ``[sentence, width, d]``, each sentence's points first, zeros after."""
    out = np.zeros((len(starts) - 1, width, x.shape[1]))
    for s, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        out[s, :b - a] = x[a:b]
    return out


def weight_change(q: np.ndarray, k: np.ndarray, q2: np.ndarray, k2: np.ndarray, starts: np.ndarray, scale: float,
                  causal: bool) -> float:
    """Largest |weight before − weight after| over every sentence (points ``starts[s]:starts[s + 1]``) when the
    queries ``q`` and keys ``k`` are replaced by ``q2`` and ``k2``. All sentences at once, padded to the longest
    (padding keys masked out, padding queries ignored)."""
    lengths = np.diff(starts)
    width = int(lengths.max())
    valid = np.arange(width)[None, :] < lengths[:, None]                    # (sentence, position)
    mask = valid[:, None, :] & (causal_mask(width) if causal else True)     # (sentence, query, key)
    before = softmax(attention_scores(_packed(q, starts, width), _packed(k, starts, width), scale, mask))
    after = softmax(attention_scores(_packed(q2, starts, width), _packed(k2, starts, width), scale, mask))
    return float(np.abs(before - after)[valid].max())


def float16_bound(q: np.ndarray, k: np.ndarray, scale: float) -> float:
    """How far weights computed from float16-stored queries ``[T, d]`` and keys ``[T, d]`` can be from the model's.

    Rounding to float16 moves each coordinate by at most u = 2⁻¹¹ of itself, so each product q_i k_i by at most
    (2u + u²)|q_i k_i|, a score by δ ≤ (2u + u²) · Σ|q_i k_i| · scale, and a softmax weight by at most e^{2δ} − 1
    (taking the largest δ of the sentence); 1e-6 more covers the model's own float32 rounding.
    """
    u = 2.0 ** -11
    delta = (2 * u + u * u) * float((np.abs(q) @ np.abs(k).T).max()) * scale
    return float(np.expm1(2 * delta)) + 1e-6
