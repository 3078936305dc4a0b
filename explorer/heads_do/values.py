"""Value-weighted attention (Kobayashi et al. 2020, "Attention is not only a weight"): how much each key
actually moves a query's output, not just how much weight it gets.

For head h, query i and key j the head adds ``alpha_ij · f(x_j)`` to the attention output, where
``f(x_j) = W_O[:, h·d:(h+1)·d] · v_j`` is key j's value vector passed through that head's slice of the output
projection (bias excluded). We report ``||alpha_ij · f(x_j)|| = alpha_ij · ||f(x_j)||``. A sink token can take
most of the weight while its tiny ``f`` moves nothing: compare ``sink_weight`` and ``sink_value``.

Values are recorded by forward hooks on the value projections (``explorer.model.families`` says where, per model
family: ``v_proj`` for Llama, ``attention.self.value`` for BERT, the last third of ``attn.c_attn`` for GPT-2…),
installed once per model and silent unless a recorder is active in the calling thread. Grouped-query attention:
query head h reads value head h // (n_heads / n_kv_heads).
"""
from __future__ import annotations

import contextvars
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from explorer.attention.result import AttentionResult, extract
from explorer.heads_do.knockout import attention_layers, n_heads_of
from explorer.model import anatomy, families
from explorer.model.loading import LoadedModel

_values: contextvars.ContextVar[list | None] = contextvars.ContextVar("explorer_values", default=None)


def _ensure_hooks(model: torch.nn.Module) -> None:
    """Hook every layer's value projection once; each hook appends ``(batch, tokens, n_kv·d_head)`` values."""
    if getattr(model, "_explorer_value_hooks", False):
        return
    found = anatomy.value_projections(model)

    def hook(module, args, out):
        store = _values.get()
        if store is not None:
            store.append(anatomy.values_of(model, out.detach()))   # fused q | k | v: keep v
    for module in found:
        module.register_forward_hook(hook)
    model._explorer_value_hooks = True


def output_slices(proj: torch.nn.Module, n_heads: int) -> torch.Tensor:
    """``(n_heads, d_model, d_head)``: each head's slice ``W_O[:, h·d:(h+1)·d]`` of the output projection."""
    w = anatomy.output_projection(proj)[0].T.to(proj.weight)                 # (d_model, n_heads·d_head)
    return w.reshape(w.shape[0], n_heads, -1).permute(1, 0, 2)


def transformed_values(values: torch.Tensor, proj: torch.nn.Module, n_heads: int) -> torch.Tensor:
    """``f(x_j)`` for every head: ``(n_heads, tokens, d_model)`` from one layer's ``(tokens, n_kv·d_head)`` values."""
    slices = output_slices(proj, n_heads)                          # (H, d_model, d)
    d = slices.shape[-1]
    v = values.reshape(values.shape[0], -1, d).transpose(0, 1)     # (n_kv, T, d)
    v = v.repeat_interleave(n_heads // v.shape[0], dim=0)         # (H, T, d)
    return torch.einsum("htd,hmd->htm", v.to(slices), slices)


@dataclass
class ValueWeighted:
    """``norms[layer, head, query, key]`` = alpha · ||f(x_key)|| (float32); ``f_norms[layer, head, key]``."""
    result: AttentionResult
    norms: np.ndarray
    f_norms: np.ndarray

    @property
    def normalised(self) -> np.ndarray:
        """Each query's row of ``norms`` divided by its sum (rows sum to 1, like attention weights)."""
        total = self.norms.sum(-1, keepdims=True)
        return np.divide(self.norms, total, out=np.zeros_like(self.norms), where=total > 0)


def record_values(loaded: LoadedModel, text: str, **extract_kw) -> tuple[AttentionResult, list[torch.Tensor]]:
    """Extract ``text``'s attention and each layer's value vectors ``(tokens, n_kv·d_head)`` in the same pass."""
    families.require(loaded.model, "values")
    _ensure_hooks(loaded.model)
    store: list = []
    token = _values.set(store)
    try:
        result = extract(loaded, text, **extract_kw)
    finally:
        _values.reset(token)
    if len(store) != result.weights.shape[0]:
        raise RuntimeError(f"Recorded values of {len(store)} layers for {result.weights.shape[0]} layers.")
    return result, [v[0] for v in store]


def value_weighted(loaded: LoadedModel, text: str, **extract_kw) -> ValueWeighted:
    """Attention of ``text`` and its value-weighted norms (one forward pass)."""
    result, values = record_values(loaded, text, **extract_kw)
    _, projs = attention_layers(loaded.model)
    n = n_heads_of(loaded.model)
    with torch.inference_mode():
        f_norms = torch.stack([transformed_values(v, p, n).norm(dim=-1) for v, p in zip(values, projs)])
    f_norms = f_norms.float().cpu().numpy()                      # (L, H, K)
    return ValueWeighted(result, result.weights * f_norms[:, :, None, :], f_norms)


def sink_stats(vw: ValueWeighted) -> pd.DataFrame:
    """Per head: ``sink_weight``, the mean share of attention weight on sink keys (special tokens, else the first
    token), and ``sink_value``, the same share of the value-weighted norms. A head with high weight but low value
    share parks its attention on a sink that contributes little."""
    special = np.asarray(vw.result.keys_special, dtype=bool)
    sinks = special.copy() if special.any() else np.eye(1, len(special), dtype=bool)[0]
    weight = vw.result.weights[..., sinks].sum(-1).mean(-1)
    value = vw.normalised[..., sinks].sum(-1).mean(-1)
    n_layers, n_heads = weight.shape
    layer, head = np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij")
    return pd.DataFrame({"layer": layer.ravel(), "head": head.ravel(), "sink_weight": weight.ravel().astype(float),
                         "sink_value": value.ravel().astype(float)})


def decomposition_error(loaded: LoadedModel, text: str) -> float:
    """Largest |Σ_j alpha_ij f(x_j) − W_O·(projection input with every other head's slice zeroed)| over layers,
    heads, queries and output dimensions (bias left out of both): 0 up to rounding when the values, weights and
    output slices used here are the model's own."""
    _, projs = attention_layers(loaded.model)
    n = n_heads_of(loaded.model)
    inputs = {}
    handles = [p.register_forward_pre_hook(lambda m, a, i=i: inputs.__setitem__(i, a[0][0].detach().clone()))
               for i, p in enumerate(projs)]
    try:
        result, values = record_values(loaded, text)
    finally:
        for h in handles:
            h.remove()
    worst = 0.0
    with torch.inference_mode():
        for layer, proj in enumerate(projs):
            f = transformed_values(values[layer], proj, n).double()              # (H, T, d_model)
            ours = torch.einsum("hqk,hkm->hqm", torch.from_numpy(result.weights[layer]).double(), f)
            x, d = inputs[layer], inputs[layer].shape[-1] // n                   # (T, H·d)
            bias = 0.0 if proj.bias is None else proj.bias.double()
            for head in range(n):                                                # the module itself, one head on
                alone = torch.zeros_like(x)
                alone[:, head * d:(head + 1) * d] = x[:, head * d:(head + 1) * d]
                worst = max(worst, (ours[head] - (proj(alone).double() - bias)).abs().max().item())
    return worst

