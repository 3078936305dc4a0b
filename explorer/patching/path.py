"""Path patching (Wang et al. 2022; Goldowsky-Dill et al. 2023): how much of the difference travels from one
sender head into one receiver head's queries, keys or values.

For every sender head (s, j) before the receiver (L, h), two runs of the run's text (the corrupted one when
denoising):

1. the sender's output is taken from the other text, every other head of layers s … L − 1 is frozen at the run's
   own text (so the change reaches layer L only directly or through the MLPs and norms in between, which are
   recomputed), and the receiver's query / key / value projection output at layer L is kept;
2. a plain run in which only the receiver's queries, keys or values (``via``) are replaced by what run 1 kept;
   everything after layer L is recomputed. Its metric is the cell's value.

With grouped key/value heads (SmolLM2: 3 query heads share a key/value head) the receiver's keys or values are
its key/value head's, which the other query heads of its group read too. Batches: run 1 takes one sender layer
at a time, resumed from that layer's cached input and stopped after the receiver's projections; run 2 takes many
senders at once, resumed from layer L.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from explorer.patching import hooks
from explorer.patching.contrast import Contrast
from explorer.patching.grids import Patched, check_direction, head_fill
from explorer.patching.minimal_pairs import refuse
from explorer.words.i18n import N_, Later

VIA = ("q", "k", "v", "qkv")


class _Stop(Exception):
    """Raised after the receiver's projections have run: nothing after them is needed in run 1."""


def _check(contrast: Contrast, receiver, via: str) -> tuple[int, int]:
    c = contrast
    if c.parts.qkv is None:
        from explorer.model.families import family_of
        raise refuse(N_("{family} computes its queries, keys and values in one projection, so one head's "
                        "queries cannot be patched alone here: path patching is not available for it."),
                     family=family_of(c.loaded.model).name)
    if via not in VIA:
        raise refuse(N_("Patch the receiver's queries (q), keys (k), values (v) or all three (qkv), not {got}."),
                     got=repr(via))
    last = c.last_layer
    ok = isinstance(receiver, (tuple, list)) and len(receiver) == 2 and all(
        isinstance(x, (int, np.integer)) for x in receiver)
    if not ok or not 1 <= receiver[0] <= last or not 0 <= receiver[1] < c.n_heads:
        raise refuse(N_("Choose a receiver head after the first layer: layer 1 to {last}, head 0 to {heads}."),
                     last=last, heads=c.n_heads - 1)
    return int(receiver[0]), int(receiver[1])


def _columns(contrast: Contrast, head: int, part: int) -> slice:
    """The receiver's columns in its query (part 0), key (1) or value (2) projection's output."""
    d = contrast.parts.d_head
    index = head if part == 0 else head // (contrast.n_heads // contrast.parts.n_kv)
    return slice(index * d, (index + 1) * d)


def receiver_inputs(contrast: Contrast, base: str, source: str, sender_layer: int, senders: list[int],
                    receiver: tuple[int, int]) -> list[torch.Tensor]:
    """Run 1 for the senders ``senders`` of layer ``sender_layer`` (one row each): the receiver's query, key and
    value projection outputs, each ``(rows, T, d_head)`` (its own columns). The caller holds the lock and inference
    mode."""
    c, n = contrast, contrast.n_heads
    layer, head = receiver
    theirs = hooks.head_columns(c.runs[source].z[sender_layer][0], n)
    pre = [head_fill(c, sender_layer, theirs[:, senders].transpose(0, 1), senders, None)]
    rows = len(senders)
    for m in range(sender_layer + 1, layer):   # every head between: frozen at the run's own text
        own = c.runs[base].z[m]
        pre.append((c.parts.out_projs[m], lambda module, args, own=own: (own.expand(args[0].shape).to(args[0]),
                                                                          *args[1:])))
    kept = [None, None, None]

    def keeper(part):
        def fn(module, args, out):
            kept[part] = out[..., _columns(c, head, part)].clone()
            if all(x is not None for x in kept):
                raise _Stop
        return fn
    post = [(proj, keeper(i)) for i, proj in enumerate(c.parts.qkv[layer])]
    inputs = {k: v.expand(rows, *v.shape[1:]) for k, v in c.runs[base].inputs.items()}
    try:
        with hooks.hooks(pre, post, (), (c.parts.layers, c.runs[base].outs, sender_layer, rows)):
            c.loaded.model(**inputs, use_cache=False)
    except _Stop:
        pass
    return kept


def _receiving(contrast: Contrast, receiver: tuple[int, int], via: str, fills: list[torch.Tensor]) -> list:
    """Forward hooks on the receiver's projections: row r's own columns become ``fills[part][r]``."""
    c = contrast
    layer, head = receiver
    out = []
    for part, proj in enumerate(c.parts.qkv[layer]):
        if "qkv"[part] not in via:
            continue
        cols = _columns(c, head, part)

        def fn(module, args, y, cols=cols, fill=fills[part]):
            y = y.clone()
            y[..., cols] = fill.to(y)
            return y
        out.append((proj, fn))
    return out


def patch_path(contrast: Contrast, direction: str, receiver, via: str = "qkv", progress=None,
               max_rows: int = 72) -> Patched:
    """Every sender head before ``receiver`` into the receiver's ``via`` (``q``, ``k``, ``v``, ``qkv``): a
    ``[layer, head]`` grid (rows ≥ the receiver's layer stay at the unpatched metric)."""
    c = contrast
    layer, head = _check(c, receiver, via)
    base, source = check_direction(direction)
    start = time.perf_counter()
    n = c.n_heads
    raw = np.full((c.n_layers, n), c.runs[base].metric)
    senders = [(s, j) for s in range(layer) for j in range(n)]
    batches_b = -(-len(senders) // max_rows)
    total, done, runs = layer + batches_b, 0, 0
    kept = [[], [], []]
    with c.loaded.lock, torch.inference_mode():
        for s in range(layer):
            got = receiver_inputs(c, base, source, s, list(range(n)), (layer, head))
            for part in range(3):
                kept[part].append(got[part])
            runs += 1
            done += 1
            if progress is not None:
                progress(done, total)
        kept = [torch.cat(x) for x in kept]                     # (senders, T, d_head) each
        for b in range(0, len(senders), max_rows):
            chunk = slice(b, b + max_rows)
            rows = len(senders[chunk])
            value = c.run(base, rows, layer, post=_receiving(c, (layer, head), via, [x[chunk] for x in kept]))
            for (s, j), v in zip(senders[chunk], value.double().cpu().numpy()):
                raw[s, j] = v
            runs += 1
            done += 1
            if progress is not None:
                progress(done, total)
    notes = []
    if via != "q" and c.parts.n_kv < n:
        notes.append(Later(N_("The receiver's keys and values belong to its key/value head, which {n} query heads "
                              "share: patching them changes what those heads read too."), n=n // c.parts.n_kv))
    return Patched("path", direction, c.normalise(raw), raw, [str(i) for i in range(c.n_layers)],
                   [str(h) for h in range(n)], ("layer", "head"), c.clean, c.corrupted, receiver=(layer, head),
                   via=via, runs=runs, seconds=time.perf_counter() - start, notes=notes)
