"""A forward pass that stops after one layer: the model run with its first blocks only (the same modules, weights
untouched), for a caller that reads one layer's attention (the class's sentences, ``sentences.batch``)."""
from __future__ import annotations

from contextlib import contextmanager

import torch

from explorer.model import anatomy
from explorer.model.families import family_of


@contextmanager
def first_blocks(model: torch.nn.Module, n: int):
    """Within the ``with``, ``model`` holds only its first ``n`` blocks (the same modules, weights untouched), so a
    forward pass stops after block ``n - 1``: what a caller that reads one layer needs. Yields the number of
    blocks the pass will run: ``n``, or every block when the list is not one block per layer (ALBERT repeats a
    shared group) or ``n`` is not fewer. The caller must hold the model's lock: every user shares the module."""
    fam = family_of(model)
    layers = anatomy.blocks(model)
    total = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if not 0 < n < len(layers) or len(layers) != total:
        yield len(layers) if len(layers) == total else total
        return
    try:   # transformers 5 records attentions by hooks it puts on the modules present at the first call:
        from transformers.utils.output_capturing import maybe_install_capturing_hooks
    except ImportError:   # (older versions collect them in the model's own loop)
        pass
    else:   # put them on every block now, or a later full pass would record only the first n
        maybe_install_capturing_hooks(model)
    path, _dot, name = fam.layers.rpartition(".")
    parent = anatomy.get(model, path) if path else model
    anatomy.WHOLE[model] = layers
    setattr(parent, name, torch.nn.ModuleList(list(layers)[:n]))
    try:
        yield n
    finally:
        setattr(parent, name, layers)
        del anatomy.WHOLE[model]
