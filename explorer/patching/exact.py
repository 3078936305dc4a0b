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
before the first differing token) is not run: its value is the unpatched metric, exactly. A causal decoder's rows
also skip the tokens before their patch (``Contrast.run``'s ``first``): its residual grid is one batch a position,
rows joining at their layer; a heads batch starts at the first token whose patched outputs differ (a patterns
batch: the first query whose weights differ).
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

    def run(self, where: tuple, rows: int, start: int, enter: int | None = None, **hooked) -> None:
        """One batch of ``rows`` patched runs resumed at layer ``start`` (``enter`` rows enter the model where
        hooks add the others on the way); their metrics go to ``raw[where]``."""
        if rows:
            metrics = self.contrast.run(self.base, rows if enter is None else enter, start, **hooked)
            self.raw[where] = metrics.double().cpu().numpy()
            self.runs += 1
        self.step()


def _differing(c: Contrast, base: str, source: str, layers) -> list[list[int]]:
    """Per layer, the positions whose block input differs between the two texts (the others patch nothing)."""
    found = []
    for layer in layers:
        mine, theirs = c.runs[base].resid[layer][0], c.runs[source].resid[layer][0]     # (T, d_model)
        found.append([p for p in range(c.n_tokens) if not torch.equal(mine[p], theirs[p])])
    return found


def _residual(contrast: Contrast, base: str, source: str, progress) -> _Grid:
    c = contrast
    layers = range(c.last_layer + 1)
    cells = _differing(c, base, source, layers)
    if c.can_skip():
        return _residual_from_position(c, base, source, progress, cells)
    grid = _Grid(c, base, c.n_tokens, progress, len(layers))
    for layer in layers:
        fill, rows = c.runs[source].resid[layer][0][cells[layer]], torch.arange(len(cells[layer]))

        def put(x, cells=cells[layer], fill=fill, rows=rows):
            x = x.clone()
            x[rows, cells] = fill.to(x)
            return x
        grid.run((layer, cells[layer]), len(cells[layer]), layer,
                 block_pre=[(c.parts.layers[layer], hooks.block_input_hook(put))])
    return grid


def _residual_from_position(c: Contrast, base: str, source: str, progress, cells: list[list[int]]) -> _Grid:
    """A causal decoder's residual grid, one batch a position p: a row patching (layer l, p) changes nothing before
    p, so every row runs tokens p … T − 1 only (the earlier keys and values from ``base``'s cache), and row l joins
    the batch at block l (blocks before it would compute the unpatched run): block l's input gains the row
    ``base``'s input from p on with ``source``'s at p. Before the first row joins, the batch is ``base``'s own
    cached run."""
    positions = sorted({p for found in cells for p in found})
    grid = _Grid(c, base, c.n_tokens, progress, len(positions))
    for p in positions:
        joins = [layer for layer, found in enumerate(cells) if p in found]
        widths = [max(1, sum(j <= layer for j in joins)) for layer in range(c.n_layers)]

        def join(x, layer, first=joins[0], p=p):
            row = c.runs[base].resid[layer][:, p:].clone()
            row[0, 0] = c.runs[source].resid[layer][0, p]
            return row.to(x) if layer == first else torch.cat([x, row.to(x)])
        block_pre = [(c.parts.layers[layer], hooks.block_input_hook(lambda x, layer=layer: join(x, layer)))
                     for layer in joins]
        grid.run((joins, p), len(joins), joins[0], enter=1, block_pre=block_pre, first=p, widths=widths)
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
        if patterns:   # the rows (queries) whose weights differ: the others' outputs are the run's own
            differs = (a[cells] != c.runs[base].patterns[layer][0][cells]).any(-1).any(0)
        else:
            differs = (mine[:, cells] != theirs[:, cells].to(mine)).flatten(1).any(1)
        first = _first_patched(differs, position) if c.can_skip() and cells else 0
        fills = theirs[first:, cells].transpose(0, 1) if position is None else theirs[position, cells]
        grid.run((layer, cells), len(cells), layer, first=first,
                 pre=[head_fill(c, layer, fills, cells, None if position is None else position - first)])
    if patterns and c.kind == "encoder":   # the metric reads its own head's weights: patched, they are the source's
        grid.raw[c.pair.layer, c.pair.head] = c.runs[source].metric
    return grid


def _first_patched(differs: torch.Tensor, position: int | None) -> int:
    """The first token whose patched head outputs differ from the run's own (a causal decoder's run can start
    there): ``position`` for one position, else the first of ``differs`` ``(T,)`` that is true."""
    if position is not None:
        return position
    found = differs.nonzero()
    return int(found[0, 0]) if len(found) else 0


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
