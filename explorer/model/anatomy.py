"""A loaded model's anatomy: its blocks, projections, norms and embedding tables, found at the paths its family
names (:mod:`explorer.model.families` holds the table of families; this module reads a loaded model by it).

Every capability that needs a part of a model asks here; none searches module names on its own. A part missing
where the family keeps it raises ``Unsupported`` naming the family and the path.
"""
from __future__ import annotations

from weakref import WeakKeyDictionary

import numpy as np
import torch

from explorer.model.families import (
    Unsupported,
    family_of,
    fused_layout,
    n_heads,
    n_kv_heads,
    positions_of,
)
from explorer.model.family_table import Family, FirstInput

# ---------------------------------------------------------------------------------------------- where parts live

def get(module: torch.nn.Module, path: str):
    """``module``'s submodule at a dotted ``path`` (numbers index a list), or None."""
    for part in path.split("."):
        module = module[int(part)] if part.isdigit() and isinstance(module, torch.nn.ModuleList) \
            else getattr(module, part, None)
        if module is None:
            return None
    return module


def _part(model: torch.nn.Module, fam: Family, path: str, what: str, where=None):
    found = get(where if where is not None else model, path)
    if found is None:
        raise Unsupported(f"This {fam.name} model has no {what} at {path!r}, where the {fam.name} family keeps it.")
    return found


WHOLE: WeakKeyDictionary = WeakKeyDictionary()   # model -> its every block while ``cut.first_blocks`` cuts it


def blocks(model: torch.nn.Module) -> torch.nn.ModuleList:
    """The model's list of blocks: every block, also while a ``cut.first_blocks`` pass (under the model's lock) runs
    with fewer, so that a reader outside the lock (a knockout putting its hooks on) never sees the cut list."""
    whole = WHOLE.get(model)
    if whole is not None:
        return whole
    fam = family_of(model)
    return _part(model, fam, fam.layers, "list of blocks")


def attention_layers(model: torch.nn.Module) -> tuple[torch.nn.ModuleList, list[torch.nn.Module]]:
    """The model's list of blocks and each block's attention output projection (whose input is the heads'
    outputs side by side, ``(batch, tokens, n_heads * d_head)``)."""
    fam = family_of(model)
    layers = blocks(model)
    return layers, [_part(model, fam, fam.out_proj, "attention output projection", layer) for layer in layers]


def value_projections(model: torch.nn.Module) -> list[torch.nn.Module]:
    fam = family_of(model)
    return [_part(model, fam, fam.value, "value projection", layer) for layer in blocks(model)]


def mlp_of(model: torch.nn.Module, layer: torch.nn.Module) -> torch.nn.Module | None:
    fam = family_of(model)
    return None if fam.mlp is None else get(layer, fam.mlp)


def final_norm(model: torch.nn.Module) -> torch.nn.Module:
    fam = family_of(model)
    if fam.final_norm is None:
        raise Unsupported(f"{fam.name} has no norm after its last block.")
    return _part(model, fam, fam.final_norm, "final norm")


def eager_attention(module: torch.nn.Module):
    """The eager attention function an ``interface`` family's attention module calls: the one its own modeling
    file defines, else transformers' reference one (Llama's), which files without their own import."""
    import sys

    own = getattr(sys.modules[type(module).__module__], "eager_attention_forward", None)
    if own is None:
        from transformers.models.llama.modeling_llama import eager_attention_forward as own
    return own


def values_of(model: torch.nn.Module, out: torch.Tensor) -> torch.Tensor:
    """The values ``(…, n_kv · d_head)`` (key/value heads side by side) in a value projection's output ``out``.

    ``separate``: all of it. ``qkv``: queries, keys and values side by side, values last (GPT-2, Phi-3, ModernBERT).
    ``per_head``: each head's query, key and value side by side (GPT-NeoX, BLOOM). ``multi_query``: ``qkv`` or
    ``per_head`` as the config's ``multi_query`` says (GPT-BigCode: ``families.fused_layout``). ``falcon``: its
    new decoder architecture groups each key/value head's queries, key and value; else as ``multi_query``.
    ``codegen``: four blocks of (query, value, key).
    """
    fam, c = family_of(model), model.config
    kv, d = n_kv_heads(c), out.shape[-1]
    if fam.value_split == "separate":
        return out
    split = fam.value_split
    if split == "falcon":
        if getattr(c, "new_decoder_architecture", False):
            grouped = out.reshape(*out.shape[:-1], kv, n_heads(c) // kv + 2, -1)   # (…, kv, q… k v, d_head)
            return grouped[..., -1, :].flatten(-2)
        split = "multi_query"
    split = fused_layout(c, split)
    if split == "qkv":
        d_head = d // (n_heads(c) + 2 * kv)
        return out[..., -kv * d_head:]
    if split == "per_head":
        return out.reshape(*out.shape[:-1], n_heads(c), 3, -1)[..., 2, :].flatten(-2)
    if split == "codegen":
        return out.reshape(*out.shape[:-1], 4, 3, -1)[..., 1, :].flatten(-2)   # mp_num = 4 blocks of q | v | k
    raise ValueError(f"Unknown value split {split!r}")


def queries_keys(model: torch.nn.Module, attention: torch.nn.Module, seen: dict, named: dict) -> dict:
    """What a ``hooked`` family's attention computed its scores from, as a capture record (q, k as
    ``(batch, heads, tokens, d_head)``, scaling, bias), from its projections' outputs ``seen["q"]`` and
    ``seen.get("k")`` and its arguments ``named``.

    BLOOM: q | k | v per head in one projection, ALiBi added as a bias. MPNet: separate projections, a relative
    position bias. DeBERTa-v2: separate projections, its disentangled position bias (content-to-position and
    position-to-content), a scale of 1/√(d_head · (1 + the number of those)), and a boolean mask. Falcon: its own
    ``_split_heads`` of the fused projection, then its own rotation
    (``apply_rotary_pos_emb`` with the block's cos and sin) or, with ALiBi, scores ``(q·k + alibi) · scale``.
    """
    import sys

    c, fam = model.config, family_of(model)
    h, kv = n_heads(c), n_kv_heads(c)
    bias, scaling = named.get(fam.bias_kwarg), None
    if fam.read_qk == "disentangled":   # DeBERTa-v2: q·k / √(d · scale_factor) + the disentangled bias; a bool mask
        q = seen["q"].reshape(*seen["q"].shape[:-1], h, -1).transpose(1, 2)
        k = seen["k"].reshape(*seen["k"].shape[:-1], h, -1).transpose(1, 2)
        factor = 1 + sum(kind in (getattr(attention, "pos_att_type", None) or ()) for kind in ("c2p", "p2c"))
        rel = seen.get("bias")
        mask = named.get("attention_mask")
        if mask is not None:
            mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill_(
                ~mask.bool(), torch.finfo(q.dtype).min)
        return dict(q=q, k=k, scaling=(q.shape[-1] * factor) ** -0.5, mask=mask,
                    bias=None if rel is None else rel.reshape(q.shape[0], h, *rel.shape[-2:]))
    if fam.read_qk == "split_heads":    # Falcon
        q, k, _ = (x.transpose(1, 2) for x in attention._split_heads(seen["q"]))
        if bias is None:
            cos, sin = named["position_embeddings"]
            q, k = sys.modules[type(attention).__module__].apply_rotary_pos_emb(q, k, cos, sin)
        else:
            scaling = float(attention.inv_norm_factor)
            bias = bias.reshape(q.shape[0], h, 1, -1) * scaling
        return dict(q=q, k=k, scaling=scaling, bias=bias)
    if fam.read_qk == "per_head":   # BLOOM: each head's (q, k, v) side by side; ALiBi as (batch · heads, 1, keys)
        fused = seen["q"].reshape(*seen["q"].shape[:-1], h, 3, -1)
        q, k = fused[..., 0, :], fused[..., 1, :]
        if bias is not None:
            bias = bias.reshape(-1, h, *bias.shape[1:])
    else:
        q, k = seen["q"].reshape(*seen["q"].shape[:-1], h, -1), seen["k"].reshape(*seen["k"].shape[:-1], kv, -1)
    return dict(q=q.transpose(1, 2), k=k.transpose(1, 2), scaling=scaling, bias=bias)


def output_projection(proj: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(W (n_heads·d_head, d_model), bias or None)`` of an attention output projection such that
    out = heads @ W + bias: an ``nn.Linear`` stores W transposed, GPT-2's ``Conv1D`` stores it as is."""
    weight = proj.weight.detach().float()
    if isinstance(proj, torch.nn.Linear):
        weight = weight.T
    bias = getattr(proj, "bias", None)
    return weight, None if bias is None else bias.detach().float()


def norm_parts(model: torch.nn.Module, norm: torch.nn.Module) -> tuple[torch.Tensor | None, torch.Tensor | None, float]:
    """``(gain or None, bias or None, eps)`` of a norm of the family's kind: gain is 1 + weight for ``rmsnorm+1``."""
    fam = family_of(model)
    weight = getattr(norm, "weight", None)
    gain = None if weight is None else weight.detach().float() + (1.0 if fam.norm == "rmsnorm+1" else 0.0)
    bias = getattr(norm, "bias", None)
    eps = next((getattr(norm, a) for a in ("variance_epsilon", "eps", "epsilon") if getattr(norm, a, None)),
               fam.norm_eps)
    return gain, None if bias is None else bias.detach().float(), float(eps)


# ---------------------------------------------------------------------------------------------- where position enters

def linear_weights(module: torch.nn.Module) -> tuple[np.ndarray, np.ndarray]:
    """``(W (out, in), b (out,))`` float64 of a linear map with out = W @ x + b: an ``nn.Linear`` stores W as is,
    GPT-2's ``Conv1D`` stores it transposed; a map without bias gets zeros."""
    weight = module.weight.detach().double().cpu().numpy()
    if not isinstance(module, torch.nn.Linear):
        weight = weight.T
    bias = getattr(module, "bias", None)
    return weight, np.zeros(weight.shape[0]) if bias is None else bias.detach().double().cpu().numpy()


def position_rows(token_ids: list[int], how: str, padding_idx: int | None = None, offset: int = 0) -> np.ndarray:
    """The position table's row each token reads: ``index`` i; ``offset`` i + ``offset`` (OPT, BART: 2);
    ``after_padding`` (RoBERTa, XLM-R, MPNet) ``padding_idx`` + the number of non-padding tokens up to and
    including this one, and ``padding_idx`` itself for a padding token."""
    ids = np.asarray(token_ids)
    if how == "after_padding":
        kept = ids != padding_idx
        return np.where(kept, np.cumsum(kept) + padding_idx, padding_idx)
    return np.arange(len(ids)) + (offset if how == "offset" else 0)


class FirstInputParts:
    """What a learned-position family's first attention reads, as float64 arrays (see ``family_table.FirstInput``):
    ``token(ids)``, ``position(ids)`` and ``token_type`` (row 0: one segment) ``(tokens, d_emb)``; the norm's
    ``gamma``, ``beta``, ``eps`` (None: no norm); ``project`` ``(W, b)`` after the norm or None; ``queries`` and
    ``keys`` ``(W (n_heads·d_head or n_kv·d_head, d_model), b)`` of the first block."""

    def __init__(self, model: torch.nn.Module, fam: Family, spec: FirstInput):
        c = model.config
        token, position = _part(model, fam, spec.token, "token table"), _part(model, fam, spec.position,
                                                                              "position table")
        self._token, self._position, self._spec = token, position, spec
        self.token_scale = float(getattr(token, "embed_scale", 1.0) or 1.0)
        kind = None if spec.token_type is None else get(model, spec.token_type)
        self.token_type = None if kind is None else kind.weight[0].detach().double().cpu().numpy()
        norm = None if spec.norm is None else _part(model, fam, spec.norm, "embedding norm")
        self.gamma = None if norm is None else norm.weight.detach().double().cpu().numpy()
        self.beta = None if norm is None or norm.bias is None else norm.bias.detach().double().cpu().numpy()
        self.eps = None if norm is None else float(norm.eps)
        project = None if spec.project is None else get(model, spec.project)
        self.project = None if project is None else linear_weights(project)
        block = blocks(model)[0] if spec.block is None else _part(model, fam, spec.block, "first decoder block")
        w, b = linear_weights(_part(model, fam, spec.queries, "query projection", block))
        h, kv = n_heads(c), n_kv_heads(c)
        fused = fused_layout(c, spec.fused)
        d_head = w.shape[0] // (h if spec.keys is not None else 3 * h if fused == "per_head" else h + 2 * kv)
        if spec.queries_scaled:                        # OPT: q_proj(x) · scaling, scored with a scale of 1
            factor = float(get(block, spec.queries.rsplit(".", 1)[0]).scaling)
            w, b = w * factor, b * factor
        if spec.keys is not None:
            self.queries, self.keys = (w, b), linear_weights(_part(model, fam, spec.keys, "key projection", block))
        elif fused == "per_head":                      # (head, q | k | v, d_head) side by side
            wh, bh = w.reshape(h, 3, d_head, -1), b.reshape(h, 3, d_head)
            self.queries = (wh[:, 0].reshape(h * d_head, -1), bh[:, 0].reshape(-1))
            self.keys = (wh[:, 1].reshape(h * d_head, -1), bh[:, 1].reshape(-1))
        else:                                          # queries, then the key heads, then the value heads
            q, k = h * d_head, kv * d_head
            self.queries, self.keys = (w[:q], b[:q]), (w[q:q + k], b[q:q + k])
        self.d_head = d_head

    def position_ids(self, token_ids: list[int]) -> np.ndarray:
        """The row of the position table each token read (``FirstInput.position_ids``)."""
        return position_rows(token_ids, self._spec.position_ids, getattr(self._position, "padding_idx", None),
                             int(getattr(self._position, "offset", 0) or 0))

    def token(self, token_ids: list[int]) -> np.ndarray:
        rows = self._token.weight[torch.as_tensor(list(token_ids))]
        return rows.detach().double().cpu().numpy() * self.token_scale

    def position(self, token_ids: list[int]) -> np.ndarray:
        rows = self._position.weight[torch.as_tensor(self.position_ids(token_ids))]
        return rows.detach().double().cpu().numpy()


def first_input(model: torch.nn.Module, decoder: bool = False) -> FirstInputParts | None:
    """Where the first block's attention input is made (``decoder``: an encoder-decoder's first decoder
    self-attention's), for a learned-position family (else None)."""
    fam = family_of(model)
    spec = fam.decoder_input if decoder else fam.first_input
    if positions_of(model) != "learned" or spec is None:
        return None
    return FirstInputParts(model, fam, spec)


def rope_table(model: torch.nn.Module, layer: int) -> tuple[np.ndarray, float]:
    """``(inv_freq (pairs,), scaling)``: the model's own rotary frequencies for ``layer`` (``Family.rotary``): a
    rotary module's ``inv_freq`` and ``attention_scaling``, one per layer type where layers differ (Gemma 3,
    ModernBERT), or a sin | cos table (GPT-J, CodeGen), whose row 1 holds each pair's angle per position."""
    fam = family_of(model)
    found = _part(model, fam, fam.rotary, "rotary table")
    if torch.is_tensor(found):                         # (positions, sin | cos)
        half = found.shape[-1] // 2
        row = found[1].detach().double().cpu().numpy()
        return np.arctan2(row[:half], row[half:]), 1.0
    prefix = ""
    if getattr(found, "inv_freq", None) is None:
        prefix = f"{model.config.layer_types[layer]}_"
    inv_freq = getattr(found, f"{prefix}inv_freq")
    scaling = getattr(found, f"{prefix}attention_scaling", None)
    return inv_freq.detach().double().cpu().numpy(), float(1.0 if scaling is None else scaling)
