"""A score by the distance between its query and key, for the two ways position enters there (the score breakdown's
origin, :mod:`explorer.attention.score_origin`, picks one by the family's ``positions``).

* Rotary decoders (Llama-like, GPT-NeoX, Phi, Falcon, Gemma 3, ModernBERT; GPT-J and CodeGen pair dimensions
  2i, 2i + 1): the captured queries and keys are rotated; turning them back with the model's own frequencies gives
  the vectors before rotation (``rotary_view``). Their score at every distance is the relative-position curve; at
  the pair's own distance it is the heatmap's score. The rotation maths is the Positional encodings lab's.
* ALiBi (BLOOM, Falcon with alibi): the bias is slope × key position, checked against the head's slope
  (``alibi_view``); along a row it is −slope × distance plus one constant the softmax ignores.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from explorer.attention.breakdown import ScoreBreakdown
from explorer.labs.positions import rope_cos_sin, rotate_halves, unrotate_halves

CURVE_SPAN = 128   # the relative-position curve reaches at least this many positions back

# ---------------------------------------------------------------------------------------------- rotary

@dataclass(frozen=True)
class RotaryView:
    """One pair's score with and without rotation. ``query_before``/``key_before``: the vectors before rotation
    ``(d_head,)``; ``before``: scale · their dot product (the score if neither were rotated); ``after``: the
    heatmap's score (pre-softmax, mask aside). ``curve[i]``: the same two vectors' score with the query
    ``distances[i]`` positions after the key (negative: before it, for an encoder, whose queries also read later
    keys); ``own``: the pair's own distance (query − key); ``earliest``: the smallest distance this text allows the
    query (0 in a causal decoder)."""
    query_before: np.ndarray
    key_before: np.ndarray
    before: float
    after: float
    distances: np.ndarray
    curve: np.ndarray
    own: int
    earliest: int = 0

    @property
    def at_own(self) -> float:
        return float(self.curve[self.distances == self.own][0])

    def peak(self, within: int | None = None) -> int:
        """The distance (``earliest`` … ``within``, default all) where the curve is highest."""
        keep = (self.distances <= (self.distances.max() if within is None else within)) & (
            self.distances >= (self.distances.min() if within is None else self.earliest))
        return int(self.distances[keep][np.argmax(self.curve[keep])])


def relative_curve(query_before: np.ndarray, key_before: np.ndarray, distances: np.ndarray, inv_freq: np.ndarray,
                   scaling: float, scale: float) -> np.ndarray:
    """scale · rotate(query, d) · rotate(key, 0) for each distance ``d``: RoPE's score depends on the distance
    alone, so putting the key at 0 and the query at d gives the score at distance d anywhere in a text."""
    cos, sin = rope_cos_sin(distances, inv_freq, scaling)               # (D, d_rot/2)
    cos0, sin0 = rope_cos_sin(np.array([0]), inv_freq, scaling)
    queries = rotate_halves(query_before, cos, sin)                     # (D, d_head)
    key = rotate_halves(key_before, cos0[0], sin0[0])                   # (d_head,)
    return queries @ key * scale


def halves_order(d_head: int, pairs: int, layout: str) -> np.ndarray:
    """The order of a vector's dimensions that puts an ``interleaved`` rotation (pairs 2i, 2i + 1 of the first
    2·``pairs`` dimensions: GPT-J, CodeGen) into the ``halves`` layout (i with i + pairs) that ``rotate_halves``
    turns; the identity for ``halves``. A dot product is the same in any order of dimensions."""
    if layout == "halves":
        return np.arange(d_head)
    r = 2 * pairs
    return np.concatenate([np.arange(0, r, 2), np.arange(1, r, 2), np.arange(r, d_head)])


def rotary_view(inv_freq: np.ndarray, scaling: float, layout: str, b: ScoreBreakdown, n_tokens: int,
                causal: bool = True) -> RotaryView:
    """Turn ``b``'s captured (rotated) query and key back with the model's own frequency table, and score the
    pair at every distance 0 … max(``CURVE_SPAN`` − 1, ``n_tokens`` − 1) (an encoder: as far the other way too),
    soft-capped as the model caps its
    scores (Gemma 2). The vectors before rotation are given in the model's own order of dimensions."""
    order = halves_order(b.d_head, len(inv_freq), layout)
    back = np.argsort(order)
    cos, sin = rope_cos_sin(np.array([b.query, b.key]), inv_freq, scaling)
    q0 = unrotate_halves(b.query_vector[order], cos[0], sin[0])
    k0 = unrotate_halves(b.key_vector[order], cos[1], sin[1])
    span = max(CURVE_SPAN, n_tokens)
    distances = np.arange(0 if causal else 1 - span, span)
    curve = capped(relative_curve(q0, k0, distances, inv_freq, scaling, b.scale), b.softcap)
    return RotaryView(q0[back], k0[back], float(capped(q0 @ k0 * b.scale, b.softcap)), b.capped, distances, curve,
                      b.query - b.key, 0 if causal else b.query - (n_tokens - 1))


def capped(scores, softcap: float | None):
    """Gemma 2's soft cap, cap · tanh(scores / cap), on scores of the curve (unchanged without one)."""
    return scores if not softcap else np.tanh(np.asarray(scores) / softcap) * softcap


# ---------------------------------------------------------------------------------------------- ALiBi

def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's slope per head: for n a power of 2, the geometric sequence 2^(−8/n), 2^(−16/n), … 2^(−8); otherwise
    the sequence for the nearest power of 2 below, then every other slope of the one for twice that."""
    closest = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = [2.0 ** (-8.0 * i / closest) for i in range(1, closest + 1)]
    extra = [2.0 ** (-8.0 * i / (2 * closest)) for i in range(1, 2 * closest + 1, 2)]
    return np.array(slopes + extra[:n_heads - closest])


@dataclass(frozen=True)
class AlibiView:
    """ALiBi's part of one score: the head's ``slope``; ``expected`` = slope × key position (× the model's scale
    when it adds the bias before scaling: ``factor``), which must equal the bias the model added (``bias``);
    ``penalty`` = −slope × distance × factor, the part that differs from key to key; ``constant`` = slope × query
    position × factor, the same for every key of the row (the softmax ignores it)."""
    slope: float
    factor: float
    bias: float
    expected: float
    penalty: float
    constant: float
    distance: int


def alibi_view(b: ScoreBreakdown, bias_scaled: bool = False) -> AlibiView:
    """ALiBi's part of ``b``'s score, from the head's slope (``bias_scaled``: the model adds the bias before its
    scale, as Falcon)."""
    slope = float(alibi_slopes(b.n_heads)[b.head])
    factor = b.scale if bias_scaled else 1.0
    return AlibiView(slope, factor, b.bias, slope * b.key * factor, -slope * (b.query - b.key) * factor,
                     slope * b.query * factor, b.query - b.key)
