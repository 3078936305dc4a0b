"""Hooks for one patched run: installed together, always removed together (TransformerLens's ``hooks()``).

Where each part lives comes from the family adapter (``explorer.model.anatomy`` / ``families``): the list of blocks,
each block's attention output projection (whose input is the heads' outputs side by side, ``(batch, tokens,
n_heads · d_head)``: knocking a head out in ``explorer.heads_do.knockout`` hooks the same input), the value
projection and, for path patching, the query and key projections. A run may also *resume*: blocks before its
first patched layer return the cached output of the run's own text instead of computing it (they cannot change),
from the run's first token on (``tokens_from``).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import torch

from explorer.model import anatomy, families


@dataclass
class Parts:
    """A loaded model's parts that patching reads. ``qk``: per block the (query, key, value) projections when the
    family keeps them separate (path patching needs them), else None."""
    layers: torch.nn.ModuleList
    out_projs: list
    values: list
    qkv: list | None
    n_heads: int
    n_kv: int
    d_head: int


def parts(model: torch.nn.Module) -> Parts:
    layers, projs = anatomy.attention_layers(model)
    n, kv = families.n_heads(model), families.n_kv_heads(model)
    qkv = None
    fam = families.family_of(model)
    if fam.value_split == "separate" and fam.q_proj and fam.k_proj:
        found = [(anatomy.get(layer, fam.q_proj), anatomy.get(layer, fam.k_proj),
                  anatomy.get(layer, fam.value)) for layer in layers]
        qkv = found if all(m is not None for trio in found for m in trio) else None
    width = projs[0].weight.shape[1 if isinstance(projs[0], torch.nn.Linear) else 0]
    return Parts(layers, projs, anatomy.value_projections(model), qkv, n, kv, width // n)


def _input_of(args, kwargs):
    if args:
        return args[0]
    return kwargs["hidden_states"]


def _with_input(args, kwargs, x):
    if args:
        return (x, *args[1:]), kwargs
    return args, {**kwargs, "hidden_states": x}


def block_input_hook(fn):
    """A forward pre-hook (``with_kwargs``) on a block: its input hidden state becomes ``fn(x)``."""
    def hook(module, args, kwargs):
        return _with_input(args, kwargs, fn(_input_of(args, kwargs)))
    return hook


def block_input(args, kwargs) -> torch.Tensor:
    return _input_of(args, kwargs)


def tokens_from(out, first: int):
    """A block's output (a tensor, or a tuple whose first item is the hidden state) from token ``first`` on."""
    if first == 0:
        return out
    if isinstance(out, tuple):
        return (out[0][:, first:], *out[1:])
    return out[:, first:]


def _expand(out, rows: int):
    if isinstance(out, torch.Tensor):
        return out.expand(rows, *out.shape[1:])
    if isinstance(out, tuple):
        return tuple(_expand(x, rows) for x in out)
    return out


@contextmanager
def hooks(pre=(), post=(), block_pre=(), resume=None):
    """Install every hook of one run; remove them all on leaving, also when the run raises half-way.

    ``pre``: ``(module, fn(module, args))`` forward pre-hooks; ``post``: ``(module, fn(module, args, out))``
    forward hooks; ``block_pre``: ``(module, fn(module, args, kwargs))`` pre-hooks with keyword arguments;
    ``resume``: ``(layers, outputs, upto, rows)``: blocks ``< upto`` return ``outputs[i]`` expanded to ``rows``
    instead of computing it."""
    handles, replaced = [], []
    try:
        for module, fn in pre:
            handles.append(module.register_forward_pre_hook(fn))
        for module, fn in post:
            handles.append(module.register_forward_hook(fn))
        for module, fn in block_pre:
            handles.append(module.register_forward_pre_hook(fn, with_kwargs=True))
        if resume is not None:
            layers, outputs, upto, rows = resume
            for i in range(upto):
                layers[i].forward = (lambda out: lambda *a, **k: _expand(out, rows))(outputs[i])
                replaced.append(layers[i])
        yield
    finally:
        for h in handles:
            h.remove()
        for layer in replaced:
            del layer.forward


def head_columns(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """``(batch, tokens, n_heads · d_head)`` -> ``(batch, tokens, n_heads, d_head)`` (a view)."""
    return x.view(*x.shape[:-1], n_heads, x.shape[-1] // n_heads)
