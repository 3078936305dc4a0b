"""Recording what goes into a model's attention, and recomputing each head from it.

While a recorder is active, a thin wrapper around the model's own eager attention function keeps each layer's
queries and keys (after RoPE, before grouped key/value heads are repeated), its scale, mask and position bias.
``recompute`` rebuilds every head from those with our own softmax(QKᵀ·scale + bias + mask): the pre-softmax
``scores`` the labs show, and the fidelity number (how far our weights are from the model's).
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np
import torch

CAPTURE = "explorer_eager"

_recorder: contextvars.ContextVar[list | None] = contextvars.ContextVar("explorer_recorder", default=None)


def _capturing_eager(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """The model's own eager attention, plus a record of what went into it (when a recorder is active)."""
    from explorer.model.anatomy import eager_attention
    own = eager_attention(module)
    output, weights = own(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)
    record = _recorder.get()
    if record is not None:
        record.append(dict(q=query.detach(), k=key.detach(), scaling=scaling, mask=attention_mask,
                           bias=kwargs.get("position_bias"), weights=weights.detach(),
                           **({"softcap": kwargs["softcap"]} if kwargs.get("softcap") else {})))
    return output, weights


def _capturing_method(module, own):
    """GPT-J's and CodeGen's ``_attn(query, key, value, mask)`` (their own code: softmax(QKᵀ / scale_attn + mask)),
    plus a record of what went into it. CodeGen adds the mask before dividing by the scale: its masked entries
    stay below -1e37 either way, and the unmasked ones see a zero mask, so the record is the same."""
    def _attn(query, key, value, attention_mask=None):
        output, weights = own(query, key, value, attention_mask)
        record = _recorder.get()
        if record is not None:
            record.append(dict(q=query.detach(), k=key.detach(), scaling=float(1.0 / module.scale_attn),
                               mask=attention_mask, bias=None, weights=weights.detach()))
        return output, weights
    return _attn


def _hook_family(model, fam) -> bool:
    """Record a ``hooked`` family's attention (BLOOM, MPNet, Falcon): queries and keys from the projections'
    outputs (``anatomy.queries_keys``), the mask and position bias from the attention module's arguments, its
    weights from what it returns. Recorded
    only while a recorder is active and the module returns its weights (extraction asks for them)."""
    import inspect

    from explorer.model import anatomy

    for layer in anatomy.blocks(model):
        attention = anatomy.get(layer, fam.attn or fam.out_proj.rsplit(".", 1)[0])
        q_source = anatomy.get(layer, fam.queries)
        k_source = None if fam.keys is None else anatomy.get(layer, fam.keys)
        if attention is None or q_source is None or (fam.keys is not None and k_source is None):
            return False
        seen: dict = {}
        signature = inspect.signature(attention.forward)

        def before(module, args, kwargs, seen=seen, signature=signature):
            seen.clear()
            seen["named"] = signature.bind_partial(*args, **kwargs).arguments

        def after(module, args, kwargs, output, seen=seen):
            record = _recorder.get()
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if record is None or not torch.is_tensor(weights) or "q" not in seen:
                return
            found = anatomy.queries_keys(model, module, seen, seen["named"])
            mask = found["mask"] if "mask" in found else seen["named"].get("attention_mask")
            record.append(dict(q=found["q"].detach(), k=found["k"].detach(), scaling=found["scaling"],
                               mask=mask, bias=found["bias"], weights=weights.detach()))

        attention.register_forward_pre_hook(before, with_kwargs=True)
        attention.register_forward_hook(after, with_kwargs=True)
        q_source.register_forward_hook(lambda m, a, out, seen=seen: seen.__setitem__("q", out.detach()))
        if k_source is not None:
            k_source.register_forward_hook(lambda m, a, out, seen=seen: seen.__setitem__("k", out.detach()))
        if fam.bias_method:
            setattr(attention, fam.bias_method, _keeping(getattr(attention, fam.bias_method), seen))
    return True


def _keeping(method, seen: dict):
    """``method`` (a bound method of the attention) that also keeps its result as ``seen["bias"]``."""
    def kept(*args, **kwargs):
        out = method(*args, **kwargs)
        seen["bias"] = None if out is None else out.detach()
        return out
    return kept


def enable_capture(model: torch.nn.Module) -> bool:
    """Route the model's attention through a recording wrapper, as its family says (``families.Family.attention``):
    transformers' attention interface, or the family's own ``_attn`` method. False if the model cannot be routed
    (attention in its own code, or a module without its own eager attention function)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    from explorer.model import anatomy, families

    try:
        how = families.family_of(model).attention
    except families.Unsupported:
        how = "interface"          # an unknown family: the fidelity number says whether the capture saw it all
    if how == "method":
        fam = families.family_of(model)
        for layer in anatomy.blocks(model):
            attention = anatomy.get(layer, fam.out_proj.rsplit(".", 1)[0])
            if not callable(getattr(attention, "_attn", None)) or not hasattr(attention, "scale_attn"):
                return False
            attention._attn = _capturing_method(attention, attention._attn)
        return True
    if how == "hooked":
        return _hook_family(model, families.family_of(model))
    if how != "interface":
        return False
    AttentionInterface.register(CAPTURE, _capturing_eager)
    AttentionMaskInterface.register(CAPTURE, eager_mask)  # same masks as eager (causal, padding)
    try:
        model.set_attn_implementation(CAPTURE)
    except (ValueError, KeyError, AttributeError):
        return False
    return model.config._attn_implementation == CAPTURE


def recompute_tensors(record: dict, dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Our own ``scores`` and ``weights`` for one captured layer, ``[head, query, key]`` tensors of ``dtype`` on
    the record's device: softmax(QKᵀ·scale + bias + mask) written out step by step, no model code involved.

    Grouped-query attention: query head h reads key head h // (n_heads / n_kv_heads). A record with a ``softcap``
    (Gemma 2) squashes the scaled scores to ``cap · tanh(scores / cap)`` before the mask, as the model does.
    """
    q = record["q"][0].to(dtype)                              # (n_heads, Q, d_head)
    k = record["k"][0].to(dtype)                              # (n_kv_heads, K, d_head)
    k = k.repeat_interleave(q.shape[0] // k.shape[0], dim=0)  # (n_heads, K, d_head)
    scale = record["scaling"] if record["scaling"] is not None else q.shape[-1] ** -0.5
    scores = (q @ k.transpose(-1, -2)) * scale                # (n_heads, Q, K)
    if record.get("softcap"):                                  # Gemma 2: scores squashed into (-cap, cap)
        scores = torch.tanh(scores / record["softcap"]) * record["softcap"]
    extras = [x for x in (record["bias"], record["mask"]) if x is not None]
    for extra in extras:
        scores = scores + extra[0].to(dtype)[..., -q.shape[1]:, -k.shape[1]:]
    if extras:
        masked = scores <= torch.finfo(torch.float32).min / 2  # the model's additive mask: float32's minimum
        scores = scores.masked_fill(masked, float("-inf"))
    peak = scores.amax(dim=-1, keepdim=True).nan_to_num(neginf=0.0)  # shift-invariant: exp cannot overflow
    e = (scores - peak).exp_()
    weights = e.div_(e.sum(dim=-1, keepdim=True))
    if extras:
        weights = weights.nan_to_num_(0.0)                     # 0/0 only in a row that sees nothing
    return scores, weights


def head_record(record: dict, head: int) -> dict:
    """A captured layer narrowed to one query head (and the key head it reads, with grouped-query attention), for
    ``recompute_tensors`` to rebuild that head alone."""
    n_heads, n_kv = record["q"].shape[1], record["k"].shape[1]
    kv = head // (n_heads // n_kv)
    def narrowed(extra):   # a bias or mask given per head (Falcon with ALiBi folds its bias into the mask)
        return extra[:, head:head + 1] if extra is not None and extra.dim() == 4 and extra.shape[1] > 1 else extra
    return {**record, "q": record["q"][:, head:head + 1], "k": record["k"][:, kv:kv + 1],
            "bias": narrowed(record["bias"]), "mask": narrowed(record["mask"])}


def recompute(record: dict) -> tuple[np.ndarray, np.ndarray]:
    """Our own scores (float32) and weights (float64) for one captured layer, ``[head, query, key]`` each.

    The maths of ``maths.attention_scores`` + ``maths.softmax``, in torch float64 on the CPU. Extraction uses
    ``_recompute`` in float32 on the model's device instead: numpy float64 took 3 s of a 3.4 s extraction for
    512 tokens on the embedded encoder.
    """
    on_cpu = {key: value.cpu() if isinstance(value, torch.Tensor) else value for key, value in record.items()}
    scores, weights = recompute_tensors(on_cpu, torch.float64)
    return scores.float().numpy(), weights.numpy()


@contextlib.contextmanager
def recording():
    """Within this block, every attention call of a model routed through ``enable_capture`` appends one record
    (a dict: q, k, scaling, mask, bias, weights) to the yielded list, in call order."""
    records: list[dict] = []
    token = _recorder.set(records)
    try:
        yield records
    finally:
        _recorder.reset(token)
