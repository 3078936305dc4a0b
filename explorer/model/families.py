"""What a model family is, written once, and every question the explorer asks of it.

The table itself, one ``Family`` per transformers ``config.model_type`` with where each part of a block lives,
is :mod:`explorer.model.family_table`; here it is looked up (``family_of``, ``kind_of``), refusals are said
(``refusal``, ``require``, ``matrix``) and the facts a config gives are read through the family's rules
(``positions_of``, ``n_kv_heads``, ``d_head``, ``context_length``, the logit and residual scales). Every capability
reads them here; none searches module names on its own.

Where the parts live in a loaded model is read by :mod:`explorer.model.anatomy`. No other module tests a model's
type or class name (tests/unit/test_family_rules.py): a rule that depends on the family is a field of the table,
read here. A model of an unknown family still shows its attention weights (and scores with their fidelity number,
when its attention goes through transformers' interface); every other capability refuses, naming the family and the
known ones.
"""
from __future__ import annotations

import re

import torch

from explorer.model.family_table import FAMILIES, Family, said
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


