"""The table of model families: one ``Family`` per transformers ``config.model_type`` (the idea of
TransformerLens's one architecture adapter per family: config attributes, a mapping from our names to the model's
module paths). Plain data: ``explorer.model.families`` looks a family up and answers every question about it. A
family states:

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
- ``refused``: capabilities this family cannot have, each with its one-sentence reason;
- ``q_proj``, ``k_proj``: a block's own query and key projections, where the family keeps them separate (path
  patching replaces one head's queries or keys there).

Teach the app a new family: add one ``Family`` to ``_FAMILIES`` and a tiny config to ``tests/family_configs.py``;
the family matrix (tests/unit/test_family_matrix.py) checks that every capability works or refuses as stated, and
``tools/models_table.py`` regenerates docs/models.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from explorer.words.i18n import N_, _


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
    q_proj: str | None = None       # block -> a query projection of its own (path patching into a head's queries)
    k_proj: str | None = None       # block -> a key projection of its own (None with either: no path patching)


def _llama_like(model_type: str, name: str, **kw) -> Family:
    return Family(model_type, name, "decoder", "layers", "self_attn.o_proj", "self_attn.v_proj",
                  final_norm="norm", norm=kw.pop("norm", "rmsnorm"), q_proj="self_attn.q_proj",
                  k_proj="self_attn.k_proj", **kw)


def _bert_like(model_type: str, name: str, **kw) -> Family:
    first = FirstInput("embeddings.word_embeddings", "embeddings.position_embeddings", "embeddings.LayerNorm",
                       "attention.self.query", "attention.self.key", token_type="embeddings.token_type_embeddings",
                       **kw.pop("first", {}))
    return Family(model_type, name, "encoder", "encoder.layer", "attention.output.dense", "attention.self.value",
                  placement="post", mlp=None, positions="learned", first_input=first,
                  q_proj="attention.self.query", k_proj="attention.self.key", **kw)


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
