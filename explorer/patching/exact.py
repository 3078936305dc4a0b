"""Exact activation patching: the model run again with one activation taken from the other text, for every cell
of a grid (TransformerLens ``patching.py``: one generic patched run, one index per granularity).

- ``residual``: block l's input at position p (causal tracing's layer × position grid);
- ``heads``: head h of layer l's output at every position; ``heads_at``: at one position;
- ``patterns``: head h of layer l's attention weights (its output becomes the other text's weights times this
  run's values);
- ``path``: see :mod:`explorer.patching.path`.

``denoise`` runs the corrupted text and patches in the clean activation; ``noise`` runs the clean text and patches
in the corrupted one. Values are normalised as ``Contrast.normalise`` (0 = the corrupted run, 1 = the clean run)
either way: unpatched, a denoising cell reads 0 and a noising cell 1. Each layer's cells are one batch resumed from
the cached input of that layer; a cell whose patched activation equals the run's own (a causal decoder's positions
before the first differing token) is not run: its value is the unpatched metric, exactly.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from explorer.patching import hooks
from explorer.patching.contrast import Contrast
from explorer.patching.grids import Patched, check_direction, head_fill, position_labels
from explorer.patching.minimal_pairs import refuse
from explorer.patching.path import patch_path
from explorer.words.i18n import N_

GRANULARITIES = ("residual", "heads", "heads_at", "patterns", "path")
Progress = Callable[[int, int], None]


def _position(contrast: Contrast, position) -> int:
    if position is None or not isinstance(position, (int, np.integer)) or not \
            -contrast.n_tokens <= position < contrast.n_tokens:
        raise refuse(N_("Choose a position from 0 to {last}."), last=contrast.n_tokens - 1)
    return int(position) % contrast.n_tokens


class _Grid:
    """Fills a ``[layer, column]`` grid batch by batch, reporting progress and counting runs."""

    def __init__(self, contrast: Contrast, base: str, columns: int, progress: Progress | None, batches: int):
        self.contrast, self.base = contrast, base
        self.raw = np.full((contrast.n_layers, columns), contrast.runs[base].metric)
        self.progress, self.total, self.done, self.runs = progress, max(batches, 1), 0, 0

    def step(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    def run(self, layer: int, cells: list[int], **hooked) -> None:
        if cells:
            self.raw[layer, cells] = self.contrast.run(self.base, len(cells), layer, **hooked).double().cpu().numpy()
            self.runs += 1
        self.step()


def _residual(contrast: Contrast, base: str, source: str, progress) -> _Grid:
    c, grid = contrast, None
    layers = range(c.last_layer + 1)
    grid = _Grid(c, base, c.n_tokens, progress, len(layers))
    for layer in layers:
        mine, theirs = c.runs[base].resid[layer][0], c.runs[source].resid[layer][0]     # (T, d_model)
        cells = [p for p in range(c.n_tokens) if not torch.equal(mine[p], theirs[p])]
        fill, rows = theirs[cells], torch.arange(len(cells))

        def put(x, cells=cells, fill=fill, rows=rows):
            x = x.clone()
            x[rows, cells] = fill.to(x)
            return x
        grid.run(layer, cells, block_pre=[(c.parts.layers[layer], hooks.block_input_hook(put))])
    return grid


def _heads(contrast: Contrast, base: str, source: str, progress, position: int | None, patterns: bool) -> _Grid:
    c = contrast
    n, group = c.n_heads, c.n_heads // c.parts.n_kv
    # a head's output at layer >= the encoder metric's layer cannot change that layer's attention weights
    layers = range(c.pair.layer if c.kind == "encoder" else c.n_layers)
    grid = _Grid(c, base, n, progress, len(layers))
    for layer in layers:
        mine = hooks.head_columns(c.runs[base].z[layer][0], n)          # (T, n_heads, d_head)
        if patterns:   # this run's values weighted by the other text's attention: (T, T) @ (T, d_head) per head
            a = c.runs[source].patterns[layer][0]                         # (n_heads, T, T)
            v = c.runs[base].v[layer][0]                                  # (T, n_kv, d_head)
            theirs = torch.stack([a[h].to(v) @ v[:, h // group] for h in range(n)], dim=1)
            same = [torch.equal(a[h], c.runs[base].patterns[layer][0][h]) for h in range(n)]
        else:
            theirs = hooks.head_columns(c.runs[source].z[layer][0], n)
            same = [torch.equal(mine[:, h] if position is None else mine[position, h],
                                theirs[:, h] if position is None else theirs[position, h]) for h in range(n)]
        cells = [h for h in range(n) if not same[h]]
        fills = theirs[:, cells].transpose(0, 1) if position is None else theirs[position, cells]
        grid.run(layer, cells, pre=[head_fill(c, layer, fills, cells, position)])
    if patterns and c.kind == "encoder":   # the metric reads its own head's weights: patched, they are the source's
        grid.raw[c.pair.layer, c.pair.head] = c.runs[source].metric
    return grid


def patch(contrast: Contrast, granularity: str, direction: str = "denoise", *, position: int | None = None,
          receiver: tuple[int, int] | None = None, via: str = "qkv", progress: Progress | None = None) -> Patched:
    """Patch every cell of ``granularity`` (see the module) in ``direction``; ``progress(done, total)`` is called
    after each batch (raise in it to stop). ``position``: for ``heads_at``; ``receiver`` ``(layer, head)`` and
    ``via`` (``q``, ``k``, ``v``, ``qkv``): for ``path``."""
    if granularity not in GRANULARITIES:
        raise refuse(N_("The granularity is {got}; it is one of {known}."), got=repr(granularity),
                     known=", ".join(GRANULARITIES))
    base, source = check_direction(direction)
    if granularity == "path":
        return patch_path(contrast, direction, receiver, via, progress)
    c = contrast
    if granularity == "heads_at":
        position = _position(c, position)
    if granularity == "patterns" and (c.runs[base].patterns is None or c.runs[source].patterns is None):
        raise refuse(N_("This model's attention weights are not recorded here, so they cannot be patched."))
    start = time.perf_counter()
    with c.loaded.lock, torch.inference_mode():
        if granularity == "residual":
            grid = _residual(c, base, source, progress)
        else:
            grid = _heads(c, base, source, progress, position if granularity == "heads_at" else None,
                          granularity == "patterns")
    layers = [str(i) for i in range(c.n_layers)]
    if granularity == "residual":
        columns, axes = position_labels(c, base), ("layer", "position")
    else:
        columns, axes = [str(h) for h in range(c.n_heads)], ("layer", "head")
    return Patched(granularity, direction, c.normalise(grid.raw), grid.raw, layers, columns, axes, c.clean,
                   c.corrupted, position if granularity == "heads_at" else None, runs=grid.runs,
                   seconds=time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------- single patches

def patch_residual(contrast: Contrast, layer: int, positions: list[int], base: str = "corrupted",
                   source: str = "clean") -> float:
    """The metric of text ``base`` with block ``layer``'s input at ``positions`` taken from text ``source`` (one
    run; ``positions`` empty patches nothing)."""
    c = contrast
    theirs = c.runs[source].resid[layer][0]

    def put(x):
        x = x.clone()
        x[:, positions] = theirs[positions].to(x)
        return x
    with c.loaded.lock, torch.inference_mode():
        return float(c.run(base, 1, layer, block_pre=[(c.parts.layers[layer],
                                                        hooks.block_input_hook(put))])[0])


def top(patched: Patched, k: int = 5) -> list[dict]:
    """The ``k`` cells that move the normalised metric most from the unpatched run, largest first: dicts of
    ``row``, ``column`` (indices), ``row_label``, ``column_label``, ``value`` (normalised), ``raw`` and ``effect``
    (value − unpatched)."""
    effect = np.nan_to_num(patched.effect, nan=0.0)
    order = np.argsort(-np.abs(effect), axis=None, kind="stable")[:k]
    out = []
    for flat in order:
        r, col = np.unravel_index(flat, effect.shape)
        out.append(dict(row=int(r), column=int(col), row_label=patched.rows[r], column_label=patched.columns[col],
                        value=float(patched.values[r, col]), raw=float(patched.raw[r, col]),
                        effect=float(effect[r, col])))
    return out
