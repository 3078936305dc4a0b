"""What a model family is, written once: where each part of a block lives and what the explorer can read from it.

One ``Family`` per transformers ``config.model_type`` (the idea of TransformerLens's one architecture adapter per
family: config attributes, a mapping from our names to the model's module paths). Every capability reads it here;
none searches module names on its own. A family states:

- ``layers``: the path from the loaded base model (``AutoModel``) to its list of blocks;
- ``out_proj``: the path inside a block to the attention output projection, whose input is the heads' outputs
  side by side ``(batch, tokens, n_heads · d_head)`` (knockouts, value-weighted attention, direct effects);
- ``value`` and ``value_split``: the value projection, separate or fused with the queries and keys, and how its
  output splits (see ``values_of``);
- ``final_norm``, ``norm`` and ``placement``: the norm after the last block, its kind (``layernorm``, ``rmsnorm``,
  ``rmsnorm+1`` as in Gemma: scaled by 1 + weight) and where the blocks put their norms (``pre``: before each
  sublayer, on a copy of the residual; ``post``: after the residual sum, as BERT; ``sandwich``: also on each
  sublayer's output before it joins the residual, as OLMo-2 and Gemma 2, which breaks the sum of direct effects);
- ``attention``: ``interface`` (transformers' attention interface: the capture wraps the module's own eager
  function), ``method`` (its own ``_attn`` method, which the capture wraps), ``hooked`` (its own code, with no
  rotation after the projections: the capture reads queries and keys from the projections and the mask and
  position bias from the attention's arguments) or ``own`` (its own code, which the capture cannot see: no
  pre-softmax scores and no fidelity number);
- ``refused``: capabilities this family cannot have, each with its one-sentence reason.

Teach the app a new family: add one ``Family`` to ``_FAMILIES`` and a tiny config to ``tests/family_configs.py``;
the family matrix (tests/unit/test_family_matrix.py) checks that every capability works or refuses as stated, and
``tools/models_table.py`` regenerates docs/models.md. A model of an unknown family still shows its attention
weights (and scores with their fidelity number, when its attention goes through transformers' interface); every
other capability refuses, naming the family and the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

CAPABILITIES = ("attention", "scores", "knockout", "values", "roles", "generation", "direct_effects", "logit_lens",
                "explain")
LABELS = {"attention": "attention weights", "scores": "scores and fidelity", "knockout": "head knockout",
          "values": "value-weighted attention", "roles": "head roles", "generation": "generation",
          "direct_effects": "direct effects", "logit_lens": "logit lens", "explain": "six explanations"}
DECODER_ONLY = ("generation", "direct_effects", "logit_lens")


class Unsupported(ValueError):
    """A capability this model family cannot have; the message is the one sentence a page shows."""


@dataclass(frozen=True)
class Family:
    model_type: str
    name: str                       # as people write it: "GPT-NeoX", "Gemma 2"
    kind: str                       # "decoder" | "encoder" | "encoder-decoder"
    layers: str
    out_proj: str
    value: str
    value_split: str = "separate"   # "separate" | "qkv" | "per_head" | "falcon" | "codegen"
    final_norm: str | None = None
    norm: str = "layernorm"         # "layernorm" | "rmsnorm" | "rmsnorm+1"
    placement: str = "pre"          # "pre" | "post" | "sandwich"
    attention: str = "interface"    # "interface" | "method" | "hooked" | "own"
    mlp: str | None = "mlp"         # block -> its MLP (None: the MLP's output is the block's update minus attention)
    norm_eps: float = 1e-6          # the final norm's epsilon when the module keeps none (OLMo's fixed 1e-5)
    mixture: bool = False           # each block's MLP is a mixture of experts picked per token by a router
    queries: str | None = None      # "hooked" attention: block -> the query projection (or fused q | k | v)
    keys: str | None = None         # block -> the key projection (None: fused with the queries, split as values)
    bias_kwarg: str | None = None   # the attention's keyword argument holding its additive position bias
    attn: str | None = None         # block -> the attention module ("hooked"; default: out_proj's parent)
    bias_method: str | None = None  # the attention's method whose result is its position bias (DeBERTa-v2)
    refused: dict[str, str] = field(default_factory=dict)


def _llama_like(model_type: str, name: str, **kw) -> Family:
    return Family(model_type, name, "decoder", "layers", "self_attn.o_proj", "self_attn.v_proj",
                  final_norm="norm", norm=kw.pop("norm", "rmsnorm"), **kw)


def _bert_like(model_type: str, name: str, **kw) -> Family:
    return Family(model_type, name, "encoder", "encoder.layer", "attention.output.dense", "attention.self.value",
                  placement="post", mlp=None, **kw)


def _sandwich(name: str) -> dict[str, str]:
    return {"direct_effects": f"{name} normalises each block's attention output before adding it to the residual "
                              "stream, so a head's direct effect on the logit is not additive; see the logit lens "
                              "instead."}


def _encoder_decoder(name: str) -> dict[str, str]:
    why = (f"{name} is an encoder-decoder, and this reads one stack's own prediction; its encoder, decoder and "
           "cross attention are on the heatmap page.")
    return {"knockout": why, "values": why, "explain": why, "roles": why}


_FAMILIES = (
    # decoders
    Family("gpt2", "GPT-2", "decoder", "h", "attn.c_proj", "attn.c_attn", "qkv", final_norm="ln_f"),
    Family("gpt_bigcode", "GPT-BigCode", "decoder", "h", "attn.c_proj", "attn.c_attn", "qkv", final_norm="ln_f"),
    Family("gpt_neox", "GPT-NeoX", "decoder", "layers", "attention.dense", "attention.query_key_value", "per_head",
           final_norm="final_layer_norm"),
    Family("gptj", "GPT-J", "decoder", "h", "attn.out_proj", "attn.v_proj", final_norm="ln_f", attention="method"),
    Family("codegen", "CodeGen", "decoder", "h", "attn.out_proj", "attn.qkv_proj", "codegen", final_norm="ln_f",
           attention="method"),
    Family("bloom", "BLOOM", "decoder", "h", "self_attention.dense", "self_attention.query_key_value", "per_head",
           final_norm="ln_f", attention="hooked", mlp=None, queries="self_attention.query_key_value",
           bias_kwarg="alibi"),
    Family("falcon", "Falcon", "decoder", "h", "self_attention.dense", "self_attention.query_key_value", "falcon",
           final_norm="ln_f", attention="hooked", mlp=None, queries="self_attention.query_key_value",
           bias_kwarg="alibi"),
    Family("opt", "OPT", "decoder", "decoder.layers", "self_attn.out_proj", "self_attn.v_proj",
           final_norm="decoder.final_layer_norm", mlp=None),
    _llama_like("llama", "Llama"),
    _llama_like("mistral", "Mistral"),
    _llama_like("mixtral", "Mixtral", mixture=True),
    _llama_like("qwen2", "Qwen2"),
    _llama_like("qwen2_moe", "Qwen2-MoE", mixture=True),
    _llama_like("qwen3", "Qwen3"),
    _llama_like("granite", "Granite"),
    _llama_like("smollm3", "SmolLM3"),
    Family("phi3", "Phi-3", "decoder", "layers", "self_attn.o_proj", "self_attn.qkv_proj", "qkv", final_norm="norm",
           norm="rmsnorm"),
    _llama_like("gemma", "Gemma", norm="rmsnorm+1"),
    _llama_like("gemma2", "Gemma 2", norm="rmsnorm+1", placement="sandwich", refused=_sandwich("Gemma 2")),
    _llama_like("gemma3_text", "Gemma 3", norm="rmsnorm+1", placement="sandwich", refused=_sandwich("Gemma 3")),
    _llama_like("cohere", "Cohere", norm="layernorm"),
    _llama_like("olmo", "OLMo", norm="layernorm", norm_eps=1e-5),
    _llama_like("olmo2", "OLMo-2", placement="sandwich", refused=_sandwich("OLMo-2")),
    _llama_like("stablelm", "StableLM", norm="layernorm"),
    _llama_like("starcoder2", "StarCoder2", norm="layernorm"),
    Family("phi", "Phi", "decoder", "layers", "self_attn.dense", "self_attn.v_proj", final_norm="final_layernorm"),
    # encoders
    _bert_like("bert", "BERT"),
    _bert_like("roberta", "RoBERTa"),
    _bert_like("xlm-roberta", "XLM-RoBERTa"),
    _bert_like("electra", "ELECTRA"),
    Family("distilbert", "DistilBERT", "encoder", "transformer.layer", "attention.out_lin", "attention.v_lin",
           placement="post", mlp=None),
    Family("deberta-v2", "DeBERTa-v2", "encoder", "encoder.layer", "attention.output.dense",
           "attention.self.value_proj", placement="post", attention="hooked", mlp=None,
           queries="attention.self.query_proj", keys="attention.self.key_proj", attn="attention.self",
           bias_method="disentangled_attention_bias"),
    Family("mpnet", "MPNet", "encoder", "encoder.layer", "attention.attn.o", "attention.attn.v", placement="post",
           attention="hooked", mlp=None, queries="attention.attn.q", keys="attention.attn.k",
           bias_kwarg="position_bias"),
    Family("modernbert", "ModernBERT", "encoder", "layers", "attn.Wo", "attn.Wqkv", "qkv", final_norm="final_norm",
           mlp="mlp"),
    Family("albert", "ALBERT", "encoder", "encoder.albert_layer_groups.0.albert_layers", "attention.dense",
           "attention.value", placement="post", mlp=None,
           refused={c: "ALBERT runs one shared block in every layer, so a head cannot be knocked out or read in one "
                       "layer alone." for c in ("knockout", "values")}),
    # encoder-decoders: the heatmap shows encoder, decoder and cross attention
    Family("t5", "T5", "encoder-decoder", "encoder.block", "layer.0.SelfAttention.o", "layer.0.SelfAttention.v",
           final_norm="encoder.final_layer_norm", norm="rmsnorm", refused=_encoder_decoder("T5")),
    Family("bart", "BART", "encoder-decoder", "encoder.layers", "self_attn.out_proj", "self_attn.v_proj",
           placement="post", mlp=None, refused=_encoder_decoder("BART")),
)
FAMILIES: dict[str, Family] = {f.model_type: f for f in _FAMILIES}


# ---------------------------------------------------------------------------------------------- looking a family up

def _config(model_or_config):
    return getattr(model_or_config, "config", model_or_config)


def known() -> str:
    return ", ".join(sorted(FAMILIES))


def family_of(model_or_config) -> Family:
    """The ``Family`` of a model or config; an unknown family raises ``Unsupported`` listing the known ones."""
    model_type = getattr(_config(model_or_config), "model_type", None)
    if model_type not in FAMILIES:
        raise Unsupported(f"The explorer does not know the model family {model_type!r} yet; it knows {known()}.")
    return FAMILIES[model_type]


def refusal(model_or_config, capability: str) -> str | None:
    """The one sentence why ``capability`` is refused for this model (its family and its config), or None."""
    if capability not in CAPABILITIES:
        raise ValueError(f"Unknown capability {capability!r}; the capabilities are {', '.join(CAPABILITIES)}.")
    config = _config(model_or_config)
    try:
        fam = family_of(config)
    except Unsupported as err:
        return None if capability in {"attention", "scores"} else str(err)
    if capability in DECODER_ONLY and fam.kind != "decoder":
        return (f"{fam.name} is an {fam.kind}: {LABELS[capability]} needs a causal decoder, which predicts each next "
                "token from the ones before it.")
    if capability in fam.refused:
        return fam.refused[capability]
    if capability in {"direct_effects", "logit_lens"}:
        return _config_refusal(fam, config)
    return None


def _config_refusal(fam: Family, config) -> str | None:
    """Direct effects and the logit lens read the residual stream through the final norm straight into the
    unembedding; an OPT model without that norm (post-norm) or with a projection after it has no such path."""
    if fam.model_type == "opt" and (not getattr(config, "do_layer_norm_before", True) or getattr(
            config, "word_embed_proj_dim", None) not in (None, getattr(config, "hidden_size", None))):
        return ("This OPT model normalises after each residual sum or projects its final state before the "
                "unembedding, so its residual stream cannot be read as logits here.")
    return None


def mlp_note(model_or_config) -> str | None:
    """What a page showing MLP parts says about a mixture-of-experts family, or None."""
    try:
        fam = family_of(model_or_config)
    except Unsupported:
        return None
    if not fam.mixture:
        return None
    return (f"{fam.name}'s MLPs are mixtures of experts: each MLP part here is the sum of the experts its router "
            "picked for this token, weighted as the router weighed them.")


def family_refusal(model_type: str, capability: str) -> str | None:
    """The family's own sentence why ``capability`` is refused (what every model of ``model_type`` shares), or
    None; for a page that holds a result's facts, not the model."""
    fam = FAMILIES.get(model_type)
    return None if fam is None else fam.refused.get(capability)


def require(model_or_config, capability: str) -> None:
    """Raise ``Unsupported`` with the one sentence why, before anything runs, if ``capability`` is refused."""
    why = refusal(model_or_config, capability)
    if why:
        raise Unsupported(why)


def matrix(model_or_config) -> dict[str, str | None]:
    """``{capability: None (works) or the sentence why not}`` for a model or a config (no weights needed)."""
    return {c: refusal(model_or_config, c) for c in CAPABILITIES}


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


def blocks(model: torch.nn.Module) -> torch.nn.ModuleList:
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


def captured(model_or_config) -> bool:
    """Whether the capture records this model's attention (``capture.enable_capture``); an unknown family is
    tried, and its fidelity number says whether the capture saw everything."""
    try:
        return family_of(model_or_config).attention in {"interface", "method"}
    except Unsupported:
        return True


def n_heads(model_or_config) -> int:
    c = _config(model_or_config)
    return getattr(c, "num_attention_heads", None) or getattr(c, "n_head", None) or c.num_heads


def n_kv_heads(model_or_config) -> int:
    """Key/value heads: fewer than query heads with grouped- or multi-query attention."""
    c = _config(model_or_config)
    if c.model_type == "gpt_bigcode":
        return 1 if getattr(c, "multi_query", False) else n_heads(c)
    if c.model_type == "falcon":
        if getattr(c, "new_decoder_architecture", False):
            return c.num_kv_heads
        return 1 if getattr(c, "multi_query", False) else n_heads(c)
    return getattr(c, "num_key_value_heads", None) or n_heads(c)


def values_of(model: torch.nn.Module, out: torch.Tensor) -> torch.Tensor:
    """The values ``(…, n_kv · d_head)`` (key/value heads side by side) in a value projection's output ``out``.

    ``separate``: all of it. ``qkv``: queries, keys and values side by side, values last (GPT-2, Phi-3, ModernBERT,
    GPT-BigCode's one shared key/value head). ``per_head``: each head's query, key and value side by side
    (GPT-NeoX, BLOOM). ``falcon``: as its config says. ``codegen``: four blocks of (query, value, key).
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
        split = "qkv" if getattr(c, "multi_query", False) else "per_head"
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

    c = model.config
    h, kv = n_heads(c), n_kv_heads(c)
    bias, scaling = named.get(family_of(model).bias_kwarg), None
    if c.model_type == "deberta-v2":   # scores q·k / √(d · scale_factor) + the disentangled bias; a boolean mask
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
    if c.model_type == "falcon":
        q, k, _ = (x.transpose(1, 2) for x in attention._split_heads(seen["q"]))
        if bias is None:
            cos, sin = named["position_embeddings"]
            q, k = sys.modules[type(attention).__module__].apply_rotary_pos_emb(q, k, cos, sin)
        else:
            scaling = float(attention.inv_norm_factor)
            bias = bias.reshape(q.shape[0], h, 1, -1) * scaling
        return dict(q=q, k=k, scaling=scaling, bias=bias)
    if seen.get("k") is None:   # per head (q, k, v) side by side: BLOOM
        fused = seen["q"].reshape(*seen["q"].shape[:-1], h, 3, -1)
        q, k = fused[..., 0, :], fused[..., 1, :]
    else:
        q, k = seen["q"].reshape(*seen["q"].shape[:-1], h, -1), seen["k"].reshape(*seen["k"].shape[:-1], kv, -1)
    if bias is not None and bias.dim() == 3:           # BLOOM's ALiBi: (batch · heads, 1, keys)
        bias = bias.reshape(-1, h, *bias.shape[1:])
    return dict(q=q.transpose(1, 2), k=k.transpose(1, 2), scaling=scaling, bias=bias)


def output_projection(proj: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(W (n_heads·d_head, d_model), bias or None)`` of an attention output projection such that
    out = heads @ W + bias: an ``nn.Linear`` stores W transposed, GPT-2's ``Conv1D`` stores it as is."""
    weight = proj.weight.detach().float()
    if isinstance(proj, torch.nn.Linear):
        weight = weight.T
    bias = getattr(proj, "bias", None)
    return weight, None if bias is None else bias.detach().float()


def final_logits(model_or_config, logits: torch.Tensor) -> torch.Tensor:
    """The family's language-model head's last step on ``hidden @ W_U + b_U`` (already scaled by ``logit_scale``):
    Gemma 2's soft cap ``cap · tanh(logits / cap)``; the logits unchanged for the others."""
    cap = getattr(_config(model_or_config), "final_logit_softcapping", None)
    return logits if not cap else torch.tanh(logits / cap) * cap


def residual_scale(model_or_config) -> float:
    """What each block multiplies its attention's and MLP's outputs by before adding them to the residual stream
    (Granite's ``residual_multiplier``); 1 for the others."""
    c = _config(model_or_config)
    return float(getattr(c, "residual_multiplier", 1.0) or 1.0) if c.model_type == "granite" else 1.0


def logit_scale(model_or_config) -> float:
    """What the family's language-model head multiplies its logits by (Cohere's ``logit_scale``, Granite's
    1 / ``logits_scaling``); 1 for the others."""
    c = _config(model_or_config)
    if c.model_type == "cohere":
        return float(getattr(c, "logit_scale", 1.0) or 1.0)
    if c.model_type == "granite":
        return 1.0 / float(getattr(c, "logits_scaling", 1.0) or 1.0)
    return 1.0


def norm_parts(model: torch.nn.Module, norm: torch.nn.Module) -> tuple[torch.Tensor | None, torch.Tensor | None, float]:
    """``(gain or None, bias or None, eps)`` of a norm of the family's kind: gain is 1 + weight for ``rmsnorm+1``."""
    fam = family_of(model)
    weight = getattr(norm, "weight", None)
    gain = None if weight is None else weight.detach().float() + (1.0 if fam.norm == "rmsnorm+1" else 0.0)
    bias = getattr(norm, "bias", None)
    eps = next((getattr(norm, a) for a in ("variance_epsilon", "eps", "epsilon") if getattr(norm, a, None)),
               fam.norm_eps)
    return gain, None if bias is None else bias.detach().float(), float(eps)
