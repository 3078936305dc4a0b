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
- ``positions``: how position enters the scores, which decides where one score comes from (the score breakdown's
  origin, :mod:`explorer.attention.score_origin`): ``learned`` (a table added to the token embeddings; with
  ``first_input``, where the first block's attention input is made, the first layer's score splits into token and
  position parts), ``rope`` (queries and keys rotated; ``rotary`` is the path to the model's own frequency table,
  ``rotary_layout`` how dimensions pair: ``halves`` or ``interleaved`` as GPT-J), ``alibi`` (a distance penalty
  added to each score; ``bias_scaled``: added before the scale, as Falcon) or ``relative`` (a learned
  relative-position bias added to each score); an encoder-decoder's ``decoder_input`` says where its decoder's
  first self-attention input is made;
- what a config changes within the family, each rule written once here and read by the code: ``alibi_flag`` (the
  config flag that turns rotary positions into ALiBi, as Falcon's ``alibi``), ``kv_heads`` (how many key/value heads:
  ``grouped``, ``multi_query`` or ``falcon``), ``read_qk`` (how a ``hooked`` family's queries and keys are read),
  ``may_project`` (OPT: a config may normalise after each residual sum or project its final state),
  ``residual_scale``, ``logit_scale`` and ``logit_divisor`` (the config attributes that scale the residual updates
  and the logits, as Granite and Cohere);
- ``refused``: capabilities this family cannot have, each with its one-sentence reason.

Where the parts live in a loaded model is read by :mod:`explorer.model.anatomy`. No other module tests a model's
type or class name (tests/unit/test_family_rules.py): a rule that depends on the family is a field here. Teach the
app a new family: add one ``Family`` to ``_FAMILIES`` and a tiny config to ``tests/family_configs.py``;
the family matrix (tests/unit/test_family_matrix.py) checks that every capability works or refuses as stated, and
``tools/models_table.py`` regenerates docs/models.md. A model of an unknown family still shows its attention
weights (and scores with their fidelity number, when its attention goes through transformers' interface); every
other capability refuses, naming the family and the known ones.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

from explorer.words.i18n import N_, _

CAPABILITIES = ("attention", "scores", "knockout", "values", "roles", "generation", "direct_effects", "logit_lens",
                "explain")
LABELS = {"attention": N_("attention weights"), "scores": N_("scores and fidelity"),   # English (N_), shown via _()
          "knockout": N_("head knockout"), "values": N_("value-weighted attention"), "roles": N_("head roles"),
          "generation": N_("generation"), "direct_effects": N_("direct effects"), "logit_lens": N_("logit lens"),
          "explain": N_("six explanations")}
KINDS = (N_("encoder"), N_("decoder"), N_("encoder-decoder"))   # a family's kind, shown through _()
DECODER_ONLY = ("generation", "direct_effects", "logit_lens")


class Unsupported(ValueError):
    """A capability this model family cannot have; the message is the one sentence a page shows."""


@dataclass(frozen=True)
class FirstInput:
    """Where a learned-position family makes its first block's attention input, ``project(norm(token · scale +
    position (+ token type)))``; paths from the base model, except ``queries``/``keys`` (from the first block).

    ``position_ids``: ``index`` (position i reads row i), ``after_padding`` (RoBERTa, MPNet: non-padding tokens
    count from the table's ``padding_idx`` + 1) or ``offset`` (OPT, BART: row i + the table's ``offset``, 2).
    ``fused``: how the query projection's output holds the keys too (``separate``: a key projection of its own;
    ``qkv``: queries, keys, values side by side; ``per_head``: each head's query, key, value side by side;
    ``multi_query``: ``qkv`` when the config's ``multi_query`` is set, else ``per_head``, as GPT-BigCode).
    ``norm`` None: the sum goes straight in. A token table with an ``embed_scale`` (BART) multiplies by it.
    ``queries_scaled``: the attention scales its queries itself and scores with a scale of 1 (OPT)."""
    token: str
    position: str
    norm: str | None
    queries: str
    keys: str | None = None
    token_type: str | None = None
    project: str | None = None      # a linear map after the norm (ELECTRA's embeddings_project, ALBERT's)
    position_ids: str = "index"     # "index" | "after_padding" | "offset"
    fused: str = "separate"         # "separate" | "qkv" | "per_head" | "multi_query"
    queries_scaled: bool = False    # the query projection's output is multiplied by its attention's ``scaling``
    block: str | None = None        # base model -> the block whose attention reads it (None: the first block)


@dataclass(frozen=True)
class Family:
    model_type: str
    name: str                       # as people write it: "GPT-NeoX", "Gemma 2"
    kind: str                       # "decoder" | "encoder" | "encoder-decoder"
    layers: str
    out_proj: str
    value: str
    value_split: str = "separate"   # "separate" | "qkv" | "per_head" | "multi_query" | "falcon" | "codegen"
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
    positions: str = "rope"         # "learned" | "rope" | "alibi" | "relative"
    first_input: FirstInput | None = None   # "learned": where the first block's attention input is made
    decoder_input: FirstInput | None = None  # an encoder-decoder's decoder: where its first self-attention's is
    rotary: str = "rotary_emb"      # "rope": base model -> its rotary module (inv_freq) or a sin | cos table
    rotary_layout: str = "halves"   # "halves" (dimension i pairs with i + r/2) | "interleaved" (2i with 2i + 1)
    bias_scaled: bool = False       # the position bias is added before the scale: (q·k + bias) · scale (Falcon)
    alibi_flag: str | None = None   # the config flag that makes "rope" "alibi" (Falcon's ``alibi``)
    kv_heads: str = "grouped"       # "grouped" (num_key_value_heads, else one per query head) | "multi_query" (one
    #                                 with the config's multi_query, else one per query head) | "falcon" (its
    #                                 num_kv_heads with new_decoder_architecture, else as "multi_query")
    read_qk: str = "projections"    # "hooked": "projections" (as projected: MPNet) | "per_head" (one projection,
    #                                 each head's q | k | v side by side, ALiBi as (batch · heads, 1, keys): BLOOM) |
    #                                 "disentangled" (DeBERTa-v2) | "split_heads" (Falcon's own split and rotation)
    may_project: bool = False       # a config may post-norm or project its final state (OPT: see opt_projects…)
    residual_scale: str | None = None   # config attribute scaling each sublayer's output (Granite's)
    logit_scale: str | None = None      # config attribute the logits are multiplied by (Cohere's logit_scale)
    logit_divisor: str | None = None    # config attribute the logits are divided by (Granite's logits_scaling)
    refused: dict[str, str] = field(default_factory=dict)


def _llama_like(model_type: str, name: str, **kw) -> Family:
    return Family(model_type, name, "decoder", "layers", "self_attn.o_proj", "self_attn.v_proj",
                  final_norm="norm", norm=kw.pop("norm", "rmsnorm"), **kw)


def _bert_like(model_type: str, name: str, **kw) -> Family:
    first = FirstInput("embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.LayerNorm",
                       "attention.self.query", "attention.self.key", token_type="embeddings.token_type_embeddings",
                       **kw.pop("first", {}))
    return Family(model_type, name, "encoder", "encoder.layer", "attention.output.dense", "attention.self.value",
                  placement="post", mlp=None, positions="learned", first_input=first, **kw)


def _gpt2_like(model_type: str, name: str, split: str = "qkv", **kw) -> Family:
    return Family(model_type, name, "decoder", "h", "attn.c_proj", "attn.c_attn", split, final_norm="ln_f",
                  positions="learned", first_input=FirstInput("wte", "wpe", "h.0.ln_1", "attn.c_attn", fused=split),
                  **kw)


_SAID: dict[str, tuple[str, str]] = {}   # a refusal built from a template -> (template, family name): see ``said``


def _from(template: str, name: str) -> str:
    """``template`` (English, N_, with a ``{name}`` field) for family ``name``, kept so that ``said`` can show it
    in the session's language."""
    text = template.format(name=name)
    _SAID[text] = (template, name)
    return text


def said(text: str | None) -> str | None:
    """A family's refusal sentence (``Family.refused``, English) in the session's language."""
    if text is None:
        return None
    template, name = _SAID.get(text, (text, None))
    return _(template) if name is None else _(template).format(name=name)


def _sandwich(name: str) -> dict[str, str]:
    return {"direct_effects": _from(N_("{name} normalises each block's attention output before adding it to the "
                                       "residual stream, so a head's direct effect on the logit is not additive; "
                                       "see the logit lens instead."), name)}


def _encoder_decoder(name: str) -> dict[str, str]:
    why = _from(N_("{name} is an encoder-decoder, and this reads one stack's own prediction; its encoder, decoder "
                   "and cross attention are on the heatmap page."), name)
    return {"knockout": why, "values": why, "explain": why, "roles": why}


_FAMILIES = (
    # decoders
    _gpt2_like("gpt2", "GPT-2"),
    _gpt2_like("gpt_bigcode", "GPT-BigCode", "multi_query", kv_heads="multi_query"),
    Family("gpt_neox", "GPT-NeoX", "decoder", "layers", "attention.dense", "attention.query_key_value", "per_head",
           final_norm="final_layer_norm"),
    Family("gptj", "GPT-J", "decoder", "h", "attn.out_proj", "attn.v_proj", final_norm="ln_f", attention="method",
           rotary="h.0.attn.embed_positions", rotary_layout="interleaved"),
    Family("codegen", "CodeGen", "decoder", "h", "attn.out_proj", "attn.qkv_proj", "codegen", final_norm="ln_f",
           attention="method", rotary="h.0.attn.embed_positions", rotary_layout="interleaved"),
    Family("bloom", "BLOOM", "decoder", "h", "self_attention.dense", "self_attention.query_key_value", "per_head",
           final_norm="ln_f", attention="hooked", mlp=None, queries="self_attention.query_key_value",
           bias_kwarg="alibi", positions="alibi", read_qk="per_head"),
    Family("falcon", "Falcon", "decoder", "h", "self_attention.dense", "self_attention.query_key_value", "falcon",
           final_norm="ln_f", attention="hooked", mlp=None, queries="self_attention.query_key_value",
           bias_kwarg="alibi", bias_scaled=True, alibi_flag="alibi", kv_heads="falcon", read_qk="split_heads"),
    Family("opt", "OPT", "decoder", "decoder.layers", "self_attn.out_proj", "self_attn.v_proj",
           final_norm="decoder.final_layer_norm", mlp=None, positions="learned",
           first_input=FirstInput("decoder.embed_tokens", "decoder.embed_positions",
                                  "decoder.layers.0.self_attn_layer_norm", "self_attn.q_proj", "self_attn.k_proj",
                                  position_ids="offset", queries_scaled=True),
           may_project=True),
    _llama_like("llama", "Llama"),
    _llama_like("mistral", "Mistral"),
    _llama_like("mixtral", "Mixtral", mixture=True),
    _llama_like("qwen2", "Qwen2"),
    _llama_like("qwen2_moe", "Qwen2-MoE", mixture=True),
    _llama_like("qwen3", "Qwen3"),
    _llama_like("granite", "Granite", residual_scale="residual_multiplier", logit_divisor="logits_scaling"),
    _llama_like("smollm3", "SmolLM3"),
    Family("phi3", "Phi-3", "decoder", "layers", "self_attn.o_proj", "self_attn.qkv_proj", "qkv", final_norm="norm",
           norm="rmsnorm"),
    _llama_like("gemma", "Gemma", norm="rmsnorm+1"),
    _llama_like("gemma2", "Gemma 2", norm="rmsnorm+1", placement="sandwich", refused=_sandwich("Gemma 2")),
    _llama_like("gemma3_text", "Gemma 3", norm="rmsnorm+1", placement="sandwich", refused=_sandwich("Gemma 3")),
    _llama_like("cohere", "Cohere", norm="layernorm", rotary_layout="interleaved",   # pairs 2i, 2i + 1
                logit_scale="logit_scale"),
    _llama_like("olmo", "OLMo", norm="layernorm", norm_eps=1e-5),
    _llama_like("olmo2", "OLMo-2", placement="sandwich", refused=_sandwich("OLMo-2")),
    _llama_like("stablelm", "StableLM", norm="layernorm"),
    _llama_like("starcoder2", "StarCoder2", norm="layernorm"),
    Family("phi", "Phi", "decoder", "layers", "self_attn.dense", "self_attn.v_proj", final_norm="final_layernorm"),
    # encoders
    _bert_like("bert", "BERT"),
    _bert_like("roberta", "RoBERTa", first=dict(position_ids="after_padding")),
    _bert_like("xlm-roberta", "XLM-RoBERTa", first=dict(position_ids="after_padding")),
    _bert_like("electra", "ELECTRA", first=dict(project="embeddings_project")),
    Family("distilbert", "DistilBERT", "encoder", "transformer.layer", "attention.out_lin", "attention.v_lin",
           placement="post", mlp=None, positions="learned",
           first_input=FirstInput("embeddings.word_embeddings", "embeddings.position_embeddings",
                                  "embeddings.LayerNorm", "attention.q_lin", "attention.k_lin")),
    Family("deberta-v2", "DeBERTa-v2", "encoder", "encoder.layer", "attention.output.dense",
           "attention.self.value_proj", placement="post", attention="hooked", mlp=None,
           queries="attention.self.query_proj", keys="attention.self.key_proj", attn="attention.self",
           bias_method="disentangled_attention_bias", positions="relative", read_qk="disentangled"),
    Family("mpnet", "MPNet", "encoder", "encoder.layer", "attention.attn.o", "attention.attn.v", placement="post",
           attention="hooked", mlp=None, queries="attention.attn.q", keys="attention.attn.k",
           bias_kwarg="position_bias", positions="learned",
           first_input=FirstInput("embeddings.word_embeddings", "embeddings.position_embeddings",
                                  "embeddings.LayerNorm", "attention.attn.q", "attention.attn.k",
                                  position_ids="after_padding")),
    Family("modernbert", "ModernBERT", "encoder", "layers", "attn.Wo", "attn.Wqkv", "qkv", final_norm="final_norm",
           mlp="mlp"),
    Family("albert", "ALBERT", "encoder", "encoder.albert_layer_groups.0.albert_layers", "attention.dense",
           "attention.value", placement="post", mlp=None, positions="learned",
           first_input=FirstInput("embeddings.word_embeddings", "embeddings.position_embeddings",
                                  "embeddings.LayerNorm", "attention.query", "attention.key",
                                  token_type="embeddings.token_type_embeddings",
                                  project="encoder.embedding_hidden_mapping_in"),
           refused={c: N_("ALBERT runs one shared block in every layer, so a head cannot be knocked out or read in "
                          "one layer alone.") for c in ("knockout", "values")}),
    # encoder-decoders: the heatmap shows encoder, decoder and cross attention
    Family("t5", "T5", "encoder-decoder", "encoder.block", "layer.0.SelfAttention.o", "layer.0.SelfAttention.v",
           final_norm="encoder.final_layer_norm", norm="rmsnorm", refused=_encoder_decoder("T5"),
           positions="relative"),
    Family("bart", "BART", "encoder-decoder", "encoder.layers", "self_attn.out_proj", "self_attn.v_proj",
           placement="post", mlp=None, refused=_encoder_decoder("BART"), positions="learned",
           first_input=FirstInput("encoder.embed_tokens", "encoder.embed_positions", "encoder.layernorm_embedding",
                                  "self_attn.q_proj", "self_attn.k_proj", position_ids="offset"),
           decoder_input=FirstInput("decoder.embed_tokens", "decoder.embed_positions", "decoder.layernorm_embedding",
                                    "self_attn.q_proj", "self_attn.k_proj", position_ids="offset",
                                    block="decoder.layers.0")),
)
FAMILIES: dict[str, Family] = {f.model_type: f for f in _FAMILIES}


# ---------------------------------------------------------------------------------------------- looking a family up

def _config(model_or_config):
    return getattr(model_or_config, "config", model_or_config)


def _family_if_known(model_or_config) -> Family | None:
    """The ``Family`` of a model or config, or None for an unknown family (whose rules are the defaults)."""
    return FAMILIES.get(getattr(_config(model_or_config), "model_type", None))


def known_families() -> str:
    return ", ".join(sorted(FAMILIES))


def family_of(model_or_config) -> Family:
    """The ``Family`` of a model or config; an unknown family raises ``Unsupported`` listing the known ones."""
    model_type = getattr(_config(model_or_config), "model_type", None)
    if model_type not in FAMILIES:
        raise Unsupported(_("The explorer does not know the model family {family} yet; it knows {known}.").format(
            family=repr(model_type), known=known_families()))
    return FAMILIES[model_type]


def kind_of(model_or_config) -> str:
    """``decoder``, ``encoder`` or ``encoder-decoder``: the family's ``kind``; an unknown family's is guessed from
    its config (``is_encoder_decoder``, a causal-LM class among its ``architectures``, or a model type transformers
    knows only as a causal LM)."""
    config = _config(model_or_config)
    fam = _family_if_known(config)
    if fam is not None:
        return fam.kind
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    if re.search(r"ForCausalLM|LMHeadModel", " ".join(getattr(config, "architectures", None) or [])):
        return "decoder"
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )
    model_type = getattr(config, "model_type", None)
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "decoder"
    return "encoder"


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
        return _("{family} is an {kind}: {capability} needs a causal decoder, which predicts each next token from "
                 "the ones before it.").format(family=fam.name, kind=_(fam.kind), capability=_(LABELS[capability]))
    if capability in fam.refused:
        return said(fam.refused[capability])
    if capability in {"direct_effects", "logit_lens"}:
        return _config_refusal(fam, config)
    return None


def opt_projects_or_post_norms(config) -> bool:
    """An OPT config that normalises after each residual sum (``do_layer_norm_before`` False) or projects its
    embeddings in and out (``word_embed_proj_dim`` other than the hidden size), as OPT-350m."""
    return not getattr(config, "do_layer_norm_before", True) or getattr(
        config, "word_embed_proj_dim", None) not in (None, getattr(config, "hidden_size", None))


def _config_refusal(fam: Family, config) -> str | None:
    """Direct effects and the logit lens read the residual stream through the final norm straight into the
    unembedding; an OPT model without that norm (post-norm) or with a projection after it has no such path."""
    if fam.may_project and opt_projects_or_post_norms(config):
        return _("This OPT model normalises after each residual sum or projects its final state before the "
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
    return None if fam is None else said(fam.refused.get(capability))


def require(model_or_config, capability: str) -> None:
    """Raise ``Unsupported`` with the one sentence why, before anything runs, if ``capability`` is refused."""
    why = refusal(model_or_config, capability)
    if why:
        raise Unsupported(why)


def matrix(model_or_config) -> dict[str, str | None]:
    """``{capability: None (works) or the sentence why not}`` for a model or a config (no weights needed)."""
    return {c: refusal(model_or_config, c) for c in CAPABILITIES}


# ---------------------------------------------------------------------------------------------- config facts

ORIGINS = {"learned": "layer 0 split into token and position parts", "rope": "rotary: the score at every distance",
           "alibi": "ALiBi: slope × key position, its own part", "relative": "relative-position bias, its own part"}


def positions_of(model_or_config) -> str:
    """How position enters this model's scores: its family's ``positions``, or what its config changes (its
    ``alibi_flag``: a Falcon model with ALiBi). An unknown family raises ``Unsupported``."""
    config = _config(model_or_config)
    fam = family_of(config)
    if fam.alibi_flag and getattr(config, fam.alibi_flag, False):
        return "alibi"
    return fam.positions


def origin_refusal(model_or_config) -> str | None:
    """The one sentence why the score breakdown cannot say where a score comes from in this model, or None (a
    learned-position family whose config builds its first input another way says so; an unknown family names the
    known ones)."""
    config = _config(model_or_config)
    try:
        fam = family_of(config)
    except Unsupported as err:
        return str(err)
    if fam.may_project and opt_projects_or_post_norms(config):
        return _("This OPT model projects its token embeddings before adding positions or normalises after "
                 "attention, so its first layer's score is not split into token and position parts here.")
    if fam.positions == "learned" and getattr(config, "position_embedding_type", "absolute") != "absolute":
        return _("This {family} model adds relative position embeddings inside its attention, so its score is "
                 "not split into token and position parts here.").format(family=fam.name)
    return None


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
    """Key/value heads: fewer than query heads with grouped- or multi-query attention (the family's ``kv_heads``;
    an unknown family reads ``num_key_value_heads``)."""
    c = _config(model_or_config)
    fam = _family_if_known(c)
    rule = fam.kv_heads if fam else "grouped"
    if rule == "falcon" and getattr(c, "new_decoder_architecture", False):
        return c.num_kv_heads
    if rule in {"multi_query", "falcon"}:
        return 1 if getattr(c, "multi_query", False) else n_heads(c)
    return getattr(c, "num_key_value_heads", None) or n_heads(c)


def d_model(model_or_config) -> int:
    """The residual stream's width: ``hidden_size``, T5's ``d_model`` or GPT-2's ``n_embd``."""
    c = _config(model_or_config)
    return int(getattr(c, "hidden_size", None) or getattr(c, "d_model", None) or c.n_embd)


def d_head(model_or_config) -> int:
    """Each head's query/key width: the config's ``head_dim`` (T5's ``d_kv``), else ``d_model`` over the heads."""
    c = _config(model_or_config)
    return int(getattr(c, "head_dim", None) or getattr(c, "d_kv", None) or d_model(c) // n_heads(c))


def position_limit(model_or_config) -> int | None:
    """The most positions the model's position table holds (its config's ``max_position_embeddings``, GPT-2's
    ``n_positions``), or None where its config names none (an ALiBi or relative-position model's may not)."""
    c = _config(model_or_config)
    return getattr(c, "max_position_embeddings", None) or getattr(c, "n_positions", None) or None


def context_length(model_or_config) -> int:
    """The most tokens the model reads at once: ``position_limit``, less the rows a family whose positions count on
    after the padding row skips (RoBERTa, MPNet: ``padding_idx`` + 1 of them, so 514 rows read 512 tokens), or 10**9
    (no limit) where its config names none. Generation, extraction and the geometry overlay all cut at it."""
    c, fam = _config(model_or_config), _family_if_known(model_or_config)
    limit = position_limit(c)
    if limit is None:
        return 10**9
    if fam and fam.first_input and fam.first_input.position_ids == "after_padding":
        limit -= (getattr(c, "pad_token_id", None) or 0) + 1
    return limit


def fused_layout(model_or_config, split: str) -> str:
    """``split`` (a ``Family.value_split`` or ``FirstInput.fused``) as this config lays it out: ``multi_query`` is
    ``qkv`` (one shared key/value head after the queries) when the config's ``multi_query`` is set, else
    ``per_head`` (each head's query, key and value side by side), as GPT-BigCode; the others unchanged."""
    if split != "multi_query":
        return split
    return "qkv" if getattr(_config(model_or_config), "multi_query", True) else "per_head"


def final_logits(model_or_config, logits: torch.Tensor) -> torch.Tensor:
    """The family's language-model head's last step on ``hidden @ W_U + b_U`` (already scaled by ``logit_scale``):
    Gemma 2's soft cap ``cap · tanh(logits / cap)``; the logits unchanged for the others."""
    cap = getattr(_config(model_or_config), "final_logit_softcapping", None)
    return logits if not cap else torch.tanh(logits / cap) * cap


def _config_number(config, name: str | None) -> float:
    """The config's number ``name`` (1 where the family names none or the config leaves it unset)."""
    return 1.0 if name is None else float(getattr(config, name, 1.0) or 1.0)


def residual_scale(model_or_config) -> float:
    """What each block multiplies its attention's and MLP's outputs by before adding them to the residual stream
    (the family's ``residual_scale``: Granite's ``residual_multiplier``); 1 for the others."""
    c, fam = _config(model_or_config), _family_if_known(model_or_config)
    return _config_number(c, fam and fam.residual_scale)


def logit_scale(model_or_config) -> float:
    """What the family's language-model head multiplies its logits by (its ``logit_scale``, as Cohere's, over its
    ``logit_divisor``, as Granite's ``logits_scaling``); 1 for the others."""
    c, fam = _config(model_or_config), _family_if_known(model_or_config)
    return _config_number(c, fam and fam.logit_scale) / _config_number(c, fam and fam.logit_divisor)


