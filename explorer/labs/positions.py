"""Position information for attention: sinusoidal encodings, learned tables, rotary embeddings (RoPE).

Pure numpy, no Streamlit. Attention by itself is blind to order (permute the tokens and the outputs are permuted
the same way), so every model injects position somehow. This module holds the maths the positions lab shows:

* sinusoidal: ``encoding[pos, 2i] = sin(pos * w_i)``, ``encoding[pos, 2i+1] = cos(pos * w_i)`` with
  ``w_i = base ** (-2i / d_model)``; a fixed offset ``k`` is the same block-diagonal rotation for every position.
* learned: a trained ``(max_positions, d_model)`` table; we compare its rows by cosine similarity.
* rotary: queries and keys are rotated pair by pair by ``pos * w_i``, so ``q_m . k_n`` depends only on ``m - n``.
* relative distance: how much attention real heads give to keys ``query - key`` positions back.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.model import families
from explorer.words.i18n import N_

SINUSOID_BASE = 10000.0  # the 2017 paper's base
# the lab's parts: English ids in the link (?pos_tab=Real heads, which a class follows), labels translated where shown
TABS = (N_("Sinusoidal"), N_("Learned table"), N_("Rotary (RoPE)"), N_("Real heads"))


# ----------------------------------------------------------------------------------------------- sinusoidal
def sinusoid_frequencies(d_model: int, base: float = SINUSOID_BASE) -> np.ndarray:
    """Angular frequency ``w_i = base ** (-2i / d_model)`` of each (sin, cos) pair, shape ``(ceil(d_model/2),)``."""
    pair = np.arange((d_model + 1) // 2)
    return base ** (-2.0 * pair / d_model)


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = SINUSOID_BASE) -> np.ndarray:
    """Fixed sinusoidal encoding, shape ``(n_positions, d_model)``.

    Even columns hold ``sin(pos * w_i)``, odd columns ``cos(pos * w_i)``; column ``j`` uses pair ``i = j // 2``.
    Row 0 is therefore ``[0, 1, 0, 1, ...]``.
    """
    pos = np.arange(n_positions, dtype=np.float64)[:, None]  # (n, 1)
    w = sinusoid_frequencies(d_model, base)  # (pairs,)
    angle = pos * w[np.arange(d_model) // 2][None, :]  # (n, d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))


def offset_matrix(offset: int, d_model: int, base: float = SINUSOID_BASE) -> np.ndarray:
    """The ``(d_model, d_model)`` matrix ``M`` with ``encoding[pos + offset] = M @ encoding[pos]`` for every ``pos``.

    From ``sin(a + b) = sin a cos b + cos a sin b`` and ``cos(a + b) = cos a cos b - sin a sin b``: each (sin, cos)
    pair is rotated by ``b = offset * w_i``. ``M`` depends on the offset only, never on ``pos``. ``d_model`` must be
    even.
    """
    if d_model % 2:
        raise ValueError(f"offset_matrix needs an even d_model (sin/cos pairs), got {d_model}")
    m = np.zeros((d_model, d_model))
    for i, w in enumerate(sinusoid_frequencies(d_model, base)):
        c, s = np.cos(offset * w), np.sin(offset * w)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m


@dataclass(frozen=True)
class OffsetCheck:
    """Result of checking that one matrix moves every position ``offset`` steps along."""
    offset: int
    matrix: np.ndarray  # (d_model, d_model)
    predicted: np.ndarray  # (n - offset, d_model): M @ encoding[pos]
    actual: np.ndarray  # (n - offset, d_model): encoding[pos + offset]
    max_error: float  # max |predicted - actual|


def check_offset_is_linear(n_positions: int, d_model: int, offset: int,
                           base: float = SINUSOID_BASE) -> OffsetCheck:
    """Apply one :func:`offset_matrix` to every position ``0 .. n-offset-1`` and compare with the true encodings."""
    if not 0 <= offset < n_positions:
        raise ValueError(f"offset must be in [0, {n_positions}), got {offset}")
    enc = sinusoidal_encoding(n_positions, d_model, base)
    m = offset_matrix(offset, d_model, base)
    predicted = enc[:n_positions - offset] @ m.T  # row-vector form of M @ e
    actual = enc[offset:]
    return OffsetCheck(offset, m, predicted, actual, float(np.max(np.abs(predicted - actual))))


def similarity_by_offset(encoding: np.ndarray, anchor: int) -> np.ndarray:
    """Cosine similarity of row ``anchor`` with every row, shape ``(n_positions,)``; x-axis is ``pos - anchor``."""
    return cosine_similarity_matrix(encoding)[anchor]


# ------------------------------------------------------------------------------------------------- learned
def cosine_similarity_matrix(table: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarity of the rows of ``table (n, d)``, shape ``(n, n)``; zero rows give 0."""
    t = np.asarray(table, dtype=np.float64)
    norms = np.linalg.norm(t, axis=-1, keepdims=True)
    unit = np.divide(t, norms, out=np.zeros_like(t), where=norms > 0)
    return unit @ unit.T


def learned_position_table(loaded) -> np.ndarray:
    """The learned ``(max_positions, d_model)`` position table of a loaded BERT-style model, as float64 numpy.

    ``loaded`` is a ``model.loading.LoadedModel``; raises ``ValueError`` naming the model when it has no table.
    """
    embeddings = getattr(getattr(loaded.model, "embeddings", None), "position_embeddings", None)
    if embeddings is None:
        raise ValueError(f"{loaded.spec.name} has no learned position table (no embeddings.position_embeddings); "
                         "pick a BERT-style encoder with learned positions")
    return embeddings.weight.detach().float().cpu().numpy().astype(np.float64)


# -------------------------------------------------------------------------------------------------- rotary
def rope_frequencies(d_head: int, theta: float) -> np.ndarray:
    """Rotation speed ``w_i = theta ** (-2i / d_head)`` of each of the ``d_head // 2`` rotated pairs."""
    if d_head % 2:
        raise ValueError(f"RoPE needs an even head size, got {d_head}")
    return theta ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def rotate_pair(xy: np.ndarray, angle: float | np.ndarray) -> np.ndarray:
    """Rotate 2-D vector(s) ``xy (..., 2)`` counter-clockwise by ``angle`` radians."""
    xy = np.asarray(xy, dtype=np.float64)
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([xy[..., 0] * c - xy[..., 1] * s, xy[..., 0] * s + xy[..., 1] * c], axis=-1)


def apply_rope(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    """Rotary embedding in the Llama ("rotate half") layout.

    ``x (..., n, d_head)``, ``positions (n,)``. Dimension ``i`` is paired with ``i + d_head/2`` and the pair is
    rotated by ``positions * w_i``; this is the layout Hugging Face Llama models (the embedded decoder) use.
    """
    angle = np.asarray(positions, dtype=np.float64)[:, None] * rope_frequencies(np.shape(x)[-1], theta)[None, :]
    return rotate_halves(x, np.cos(angle), np.sin(angle))


def rotate_halves(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """The rotary step itself, "rotate half" layout: dimension ``i`` is paired with ``i + r/2`` (``r`` =
    ``2 * cos.shape[-1]`` rotated dimensions, the first ``r`` of ``x (..., d_head)``; any after them pass through)
    and each pair turns by the angle whose ``cos``, ``sin`` ``(..., r/2)`` are given (a model may scale both by
    the same factor: its ``attention_scaling``)."""
    x = np.asarray(x, dtype=np.float64)
    x = np.broadcast_to(x, np.broadcast_shapes(x.shape[:-1], np.shape(cos)[:-1]) + x.shape[-1:])
    half = np.shape(cos)[-1]
    first, second, rest = x[..., :half], x[..., half:2 * half], x[..., 2 * half:]
    return np.concatenate([first * cos - second * sin, first * sin + second * cos, rest], axis=-1)


def unrotate_halves(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Undo :func:`rotate_halves` with the same ``cos``, ``sin``: turn each pair back by its angle (and divide out
    a common scale ``cos² + sin²``), giving the vector before rotation."""
    norm = np.asarray(cos, dtype=np.float64) ** 2 + np.asarray(sin, dtype=np.float64) ** 2
    return rotate_halves(x, cos / norm, -sin / norm)


def rope_cos_sin(positions: np.ndarray, inv_freq: np.ndarray, scaling: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)``, each ``(n, len(inv_freq))``: the angle ``position * inv_freq[i]`` of each pair at each
    position, both times ``scaling``; ``inv_freq`` is a model's own frequency table (``rotary_emb.inv_freq``)."""
    angle = np.asarray(positions, dtype=np.float64)[:, None] * np.asarray(inv_freq, dtype=np.float64)[None, :]
    return np.cos(angle) * scaling, np.sin(angle) * scaling


@dataclass(frozen=True)
class RopeCheck:
    """Scores ``q_m . k_n`` for one fixed q and k placed at every pair of positions."""
    positions: np.ndarray  # (n,)
    scores: np.ndarray  # (n, n): row m = query position, column n = key position
    by_offset: dict[int, np.ndarray]  # m - n -> every score with that offset
    max_spread: float  # largest (max - min) among scores sharing an offset


def rope_relative_check(q: np.ndarray, k: np.ndarray, n_positions: int, theta: float) -> RopeCheck:
    """Place the same ``q (d_head,)`` at each query position and ``k (d_head,)`` at each key position, rotate both.

    If RoPE encodes relative position, every diagonal of ``scores`` is constant: ``max_spread`` is float noise.
    """
    pos = np.arange(n_positions)
    qs = apply_rope(np.tile(q, (n_positions, 1)), pos, theta)  # (n, d_head)
    ks = apply_rope(np.tile(k, (n_positions, 1)), pos, theta)
    scores = qs @ ks.T  # (n, n)
    by_offset = {int(d): np.diagonal(scores, offset=-d).copy() for d in range(-(n_positions - 1), n_positions)}
    spread = max(float(v.max() - v.min()) for v in by_offset.values())
    return RopeCheck(pos, scores, by_offset, spread)


def rope_score(q: np.ndarray, k: np.ndarray, m: int, n: int, theta: float) -> float:
    """The score ``q_m · k_n`` after rotating ``q (d_head,)`` to position ``m`` and ``k`` to position ``n``."""
    return float(apply_rope(q[None], np.array([m]), theta)[0] @ apply_rope(k[None], np.array([n]), theta)[0])


def rope_settings(loaded) -> dict:
    """The rotary settings a loaded decoder really uses: ``theta``, ``d_head``, ``n_heads``, ``n_kv_heads``,
    ``max_positions``."""
    cfg = loaded.model.config
    params = getattr(cfg, "rope_parameters", None) or {}
    theta = params.get("rope_theta", getattr(cfg, "rope_theta", None))
    if theta is None:
        raise ValueError(f"{loaded.spec.name} has no rotary settings (no rope_theta in its config)")
    return {"theta": float(theta), "d_head": families.d_head(cfg), "n_heads": int(families.n_heads(cfg)),
            "n_kv_heads": int(families.n_kv_heads(cfg)), "max_positions": int(families.position_limit(cfg) or 0),
            "rope_type": str(params.get("rope_type", "default"))}


# ----------------------------------------------------------------------------------------- relative distance
def attention_by_distance(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean attention weight per relative distance ``query - key``.

    ``weights (..., n_query, n_key)`` (e.g. ``[layer, head, query, key]``) -> ``(distances, means)`` with
    ``distances`` = ``-(n_key-1) .. n_query-1`` and ``means (..., n_distances)``. Distance 0 is a token looking at
    itself, 1 the token just before it, negative distances look ahead (a causal decoder's are exactly 0).
    """
    return mean_by_offset(weights)


def mean_by_offset(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean of each diagonal of ``matrix (..., n_rows, n_cols)``, indexed by ``row - col``.

    Returns ``(offsets, means)``: ``offsets = -(n_cols-1) .. n_rows-1``, ``means (..., n_offsets)``. For a
    similarity matrix of position vectors this is "how alike are two positions k apart, on average".
    """
    m = np.asarray(matrix, dtype=np.float64)
    n_rows, n_cols = m.shape[-2:]
    offsets = np.arange(-(n_cols - 1), n_rows)
    means = np.stack([np.diagonal(m, offset=-d, axis1=-2, axis2=-1).mean(axis=-1) for d in offsets], axis=-1)
    return offsets, means
