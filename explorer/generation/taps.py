"""Hooks that keep, at the newest position of a forward pass, what the readouts need: the residual stream
before the first block and after each block, each head's output (the attention output projection's input,
split per head), and each MLP's output.

The hooks are installed once per model and record only inside ``tapping()`` (a context variable, as
``capture.recording`` does), so other pages' forward passes on the same shared model are untouched.
"""
from __future__ import annotations

import contextlib
import contextvars

import torch

from explorer.model import anatomy
from explorer.model.anatomy import attention_layers

_tap: contextvars.ContextVar[dict | None] = contextvars.ContextVar("explorer_tap", default=None)
final_norm = anatomy.final_norm               # the norm after the last block, per family (model/anatomy.py)
output_projection = anatomy.output_projection


def _last(x: torch.Tensor) -> torch.Tensor:
    return x[0, -1].detach().float().cpu()                     # (width,) at the newest position


def install(model: torch.nn.Module) -> None:
    """Add the recording hooks to ``model`` (once; a second call does nothing)."""
    if getattr(model, "_explorer_taps", False):
        return
    layers, projs = attention_layers(model)

    def before_first(module, args, kwargs):
        record = _tap.get()
        if record is not None:
            x = args[0] if args else kwargs["hidden_states"]
            record["resid"] = [_last(x)]

    def after_layer(module, args, output):
        record = _tap.get()
        if record is not None:
            record["resid"].append(_last(output[0] if isinstance(output, tuple) else output))

    def heads_in(module, args):
        record = _tap.get()
        if record is not None:
            record.setdefault("heads", []).append(_last(args[0]))

    def mlp_out(module, args, output):
        record = _tap.get()
        if record is not None:
            record.setdefault("mlp", []).append(_last(output[0] if isinstance(output, tuple) else output))

    layers[0].register_forward_pre_hook(before_first, with_kwargs=True)
    for layer, proj in zip(layers, projs):
        layer.register_forward_hook(after_layer)
        proj.register_forward_pre_hook(heads_in)
        mlp = anatomy.mlp_of(model, layer)
        if isinstance(mlp, torch.nn.Module):
            mlp.register_forward_hook(mlp_out)
    model._explorer_taps = True


@contextlib.contextmanager
def tapping():
    """Within this block, forward passes of a model with ``install``ed hooks fill the yielded dict:
    ``resid`` (n_layers + 1 tensors of d_model), ``heads`` (n_layers of n_heads·d_head), ``mlp`` (n_layers of
    d_model; absent when the blocks have no ``mlp`` module), all at the newest position."""
    record: dict = {}
    token = _tap.set(record)
    try:
        yield record
    finally:
        _tap.reset(token)
