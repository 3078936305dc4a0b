"""The heatmap page's overview of every layer × head: each head's thumbnail (average-pooled weights, the pooled
causal mask) and a few statistics that tell common head patterns apart, written out in the hover in the browser.
Kept while their (cached, read-only) ``AttentionResult`` lives, as ``explorer.attention.matrices`` keeps a rollout.
"""
from __future__ import annotations

import numpy as np

from explorer.attention import analysis
from explorer.attention.matrices import part_of, per_result
from explorer.attention.result import AttentionResult
from explorer.maths import causal_mask, pool
from explorer.words.i18n import N_, _

OVERVIEW_SIDE = 24   # thumbnails are average-pooled to at most this many rows and columns


@per_result
def tiles(result: AttentionResult, part: str, hide_special: bool = False, side: int = OVERVIEW_SIDE
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Thumbnails of every head: ``[layer, head, ≤side, ≤side]`` average-pooled weights, and the pooled causal
    mask (True where a whole cell is hidden; None for bidirectional attention). Built a few layers at a time
    (``STATS_BYTES``), so a long text never needs a second full copy of the weights, and a short one is pooled in
    one call (a layer a call was 31 calls, 3.8 ms, for a 32-token decoder text)."""
    res = part_of(result, part)
    q_sp, k_sp = np.asarray(res.special, bool), np.asarray(res.keys_special, bool)
    hide = hide_special and (q_sp.any() or k_sp.any()) and not (q_sp.all() or k_sp.all())
    rows = np.flatnonzero(~q_sp) if hide else np.arange(len(res.tokens))
    cols = np.flatnonzero(~k_sp) if hide else np.arange(len(res.keys))
    pooled = []
    for layers in _layer_chunks(res.weights):
        w = res.weights[layers][:, :, rows][..., cols] if hide else res.weights[layers]   # no copy unless hiding
        if hide:
            total = w.sum(-1, keepdims=True)
            w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
        pooled.append(pool(w, side))
    masked = None
    if res.facts.causal and res.part != "cross":
        masked = pool((causal_mask(len(res.tokens), len(res.keys)))[np.ix_(rows, cols)].astype(np.float32),
                      side) == 0
    return np.concatenate(pooled), masked


STATS = ("sink", "previous_token", "self", "entropy", "mean_distance")   # of analysis.STAT_NAMES
STATS_BYTES = 64 * 2**20   # temporaries head_stat_arrays may hold at once (a 512-token decoder layer is 38 MB)
# Hover of an overview tile: plotly fills in the numbers from the point's customdata [layer, head, *STATS].
OVERVIEW_HOVER = N_("layer {layer} · head {head}<br>on special/first tokens {sink} · previous token {previous} · self "
                     "{self}<br>entropy {entropy} nats · mean distance {distance} tokens")   # see hover()


def hover() -> str:
    """``OVERVIEW_HOVER`` in the session's language, its fields as plotly's placeholders for the customdata."""
    return _(OVERVIEW_HOVER).format(layer="%{customdata[0]}", head="%{customdata[1]}", sink="%{customdata[2]:.2f}",
                                    previous="%{customdata[3]:.2f}", self="%{customdata[4]:.2f}",
                                    entropy="%{customdata[5]:.2f}", distance="%{customdata[6]:.1f}")


@per_result
def stats(result: AttentionResult, part: str) -> np.ndarray:
    """``[layer, head, len(STATS)]``: a few statistics that tell common head patterns apart (the overview sends
    them as numbers and ``OVERVIEW_HOVER`` writes them out in the browser)."""
    res = part_of(result, part)
    n_layers, n_heads = res.weights.shape[:2]
    out = np.empty((n_layers, n_heads, len(STATS)), dtype=np.float32)
    for layers in _layer_chunks(res.weights):
        out[layers] = analysis.head_stat_arrays(res.weights[layers], res.keys_special, STATS)
    return out


def caption(hide_special: bool, shared: bool) -> str:
    """What the overview's thumbnails show, for the caption above them."""
    captions = {(False, False): N_("Thumbnails of each head (averaged down to at most 24 × 24 cells; each scaled to "
                                   "its own maximum). Hover for statistics; click a tile to show that head."),
                (False, True): N_("Thumbnails of each head (averaged down to at most 24 × 24 cells; all on one 0–1 "
                                  "scale). Hover for statistics; click a tile to show that head."),
                (True, False): N_("Thumbnails of each head (averaged down to at most 24 × 24 cells, special tokens "
                                  "hidden; each scaled to its own maximum). Hover for statistics; click a tile to "
                                  "show that head."),
                (True, True): N_("Thumbnails of each head (averaged down to at most 24 × 24 cells, special tokens "
                                 "hidden; all on one 0–1 scale). Hover for statistics; click a tile to show that "
                                 "head.")}
    return _(captions[bool(hide_special), bool(shared)])


def _layer_chunks(weights: np.ndarray) -> list[slice]:
    """Consecutive layers of ``weights[layer, …]`` in slices of at most ``STATS_BYTES`` (one layer at least)."""
    step = max(1, STATS_BYTES // (4 * weights[0].size))
    return [slice(start, start + step) for start in range(0, weights.shape[0], step)]
