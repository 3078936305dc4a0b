"""A tiny random model of every family ``explorer.model.families`` knows, built from its config with no download.

As transformers' own tests do (``tests/models/*/test_modeling_*.py``, ``get_config()``): hidden 32, 2 layers,
4 heads of d_head 8, with the word-level vocabulary of ``tiny``; each config sets what its family names
differently, and what real checkpoints of the family set where it changes the maths (Granite's multipliers,
Cohere's logit scale, DeBERTa-v2's relative positions, Falcon's multi-query attention).
"""
from __future__ import annotations

from pathlib import Path

import torch
from tiny import _tokenizer, _vocab_size

COMMON = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
              max_position_embeddings=64, pad_token_id=0, bos_token_id=2, eos_token_id=3)
LLAMA = dict(num_key_value_heads=2, head_dim=8)
CONFIGS: dict[str, dict] = {
    "gpt2": dict(n_embd=32, n_layer=2, n_head=4, n_positions=64),
    "gpt_bigcode": dict(n_embd=32, n_layer=2, n_head=4, n_positions=64, multi_query=True),
    "gpt_neox": dict(rotary_pct=0.25),
    "gptj": dict(n_embd=32, n_layer=2, n_head=4, n_positions=64, rotary_dim=4),
    "codegen": dict(n_embd=32, n_layer=2, n_head=4, n_positions=64, n_ctx=64, rotary_dim=4),
    "bloom": dict(n_layer=2, n_head=4),
    "falcon": dict(multi_query=True, parallel_attn=True, bias=False),
    "opt": dict(ffn_dim=37, word_embed_proj_dim=32, do_layer_norm_before=True),
    "llama": LLAMA,
    "mistral": dict(LLAMA, sliding_window=4),
    "mixtral": dict(LLAMA, num_local_experts=4, num_experts_per_tok=2, intermediate_size=32),
    "qwen2": LLAMA,
    "qwen2_moe": dict(LLAMA, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                      shared_expert_intermediate_size=16),
    "qwen3": LLAMA,
    "gemma": LLAMA,
    "gemma2": dict(LLAMA, sliding_window=4, final_logit_softcapping=2.0, attn_logit_softcapping=1.0),
    "gemma3_text": dict(LLAMA, sliding_window=4, sliding_window_pattern=2),
    "cohere": dict(LLAMA, logit_scale=0.0625),
    "phi": dict(partial_rotary_factor=0.5),
    "phi3": dict(num_key_value_heads=2),
    "olmo": LLAMA,
    "olmo2": LLAMA,
    "stablelm": dict(num_key_value_heads=2, partial_rotary_factor=0.25),
    "granite": dict(LLAMA, residual_multiplier=0.22, logits_scaling=8.0, embedding_multiplier=12.0,
                    attention_multiplier=0.125),
    "smollm3": LLAMA,
    "starcoder2": dict(num_key_value_heads=2),
    "bert": {}, "roberta": {}, "xlm-roberta": {}, "electra": dict(embedding_size=16),   # embeddings_project: 16 -> 32
    "distilbert": dict(dim=32, n_layers=2, n_heads=4, hidden_dim=37),
    "albert": dict(embedding_size=16),
    "deberta-v2": dict(relative_attention=True, position_buckets=8, pos_att_type=["p2c", "c2p"],
                       max_relative_positions=-1),
    "mpnet": dict(pad_token_id=1),   # MPNet pads at row 1 whatever its config says; say so, as real MPNets do
    "modernbert": dict(global_attn_every_n_layers=2, local_attention=4, cls_token_id=2, sep_token_id=3),
    "t5": dict(d_model=32, d_kv=8, num_heads=4, num_layers=2, num_decoder_layers=2, d_ff=37,
               decoder_start_token_id=0),
    "bart": dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                 decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, decoder_start_token_id=2,
                 forced_eos_token_id=None),
}
VARIANTS = {   # configs of a family that refuse more or lay out q | k | v otherwise: name -> (family, what differs)
    "opt-350m": ("opt", dict(do_layer_norm_before=False, word_embed_proj_dim=16)),
    "falcon-40b": ("falcon", dict(new_decoder_architecture=True, num_kv_heads=2, multi_query=False)),
    "falcon-rw-1b": ("falcon", dict(alibi=True, multi_query=False, parallel_attn=False, bias=True)),
    "gpt_bigcode-mha": ("gpt_bigcode", dict(multi_query=False)),   # q | k | v per head in one projection
}
ENCODERS = {"bert", "roberta", "xlm-roberta", "electra", "distilbert", "albert", "deberta-v2", "mpnet", "modernbert"}
ENCODER_DECODERS = {"t5", "bart"}


def config(name: str):
    """The tiny config of a family, or of a ``VARIANTS`` entry."""
    from transformers import AutoConfig
    family, extra = VARIANTS.get(name, (name, {}))
    kw = {**COMMON, "vocab_size": _vocab_size(), **CONFIGS[family], **extra}
    if family not in ENCODERS | ENCODER_DECODERS:
        kw["tie_word_embeddings"] = family not in {"gpt_neox", "phi3", "opt"}   # some untied heads too
    return AutoConfig.for_model(family, **kw)


def build(name: str, folder: Path) -> Path:
    """Save a tiny random model of a family (or a ``VARIANTS`` entry) with the tiny word-level tokenizer into
    ``folder``: the causal-LM class for decoders (an untied head is saved beside the body), the base model else."""
    from transformers import AutoModel, AutoModelForCausalLM
    torch.manual_seed(0)
    family = VARIANTS.get(name, (name,))[0]
    cls = AutoModel if family in ENCODERS | ENCODER_DECODERS else AutoModelForCausalLM
    model = cls.from_config(config(name))
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    _tokenizer(with_cls=family in ENCODERS).save_pretrained(folder)
    return folder
