"""Streamlit pieces for what a head sends and what role it plays: value-weighted attention (the weights times
each key's value size) and head roles with the similar-heads map.

Head roles are slow and shared: they run in a ``worker.Jobs`` kept here at module level, once per model for every
session. Value-weighted norms are kept like attention results, by (model, text) in a byte-bounded store.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from explorer.atlas import labels
from explorer.attention.result import AttentionResult
from explorer.heads_do import pairs, roles, values
from explorer.jobs import keepers
from explorer.plots import effects as plots
from explorer.serving import regions
from explorer.ui import cached
from explorer.ui.pickers import choice_picker
from explorer.ui.text import literal
from explorer.ui.views import atlas as atlas_view
from explorer.ui.widgets import show_figure
from explorer.words import i18n
from explorer.words.i18n import N_, _

ROLES = keepers.jobs("roles")
_weighted = regions.store("values")   # sized by EXPLORER_VALUE_CACHE_MB (serving/regions.py)
WEIGHTINGS = {"weights": N_("weights"), "value": N_("weight × value size")}   # English; translated where shown


# ---------------------------------------------------------------------------------------------- value weighting

def value_weighted(model: str, text: str, result: AttentionResult) -> values.ValueWeighted:
    """The value-weighted attention of ``text``, built once per (model, text) and kept in a bounded store; a
    new one is computed through the server's forward queue."""
    loaded = cached.get_model(model)

    def compute():
        vw = values.value_weighted(loaded, text)
        return vw.normalised.astype("float32"), vw.f_norms
    key = (model, text)
    stored = _weighted.peek(key)
    if stored is None:
        stored = cached.forward(("value size", *key), lambda: _weighted.get_or_compute(key, compute))
    normalised, f_norms = stored
    return values.ValueWeighted(result, normalised, f_norms)


def weighting(model: str, text: str, result: AttentionResult, key: str = "weighting") -> AttentionResult:
    """A choice between the attention weights and the weights times each key's value size (renormalised per
    row); returns the result to show (a copy with the value-weighted matrices in place of the weights)."""
    choice = choice_picker(_("Show"), key, {k: _(v) for k, v in WEIGHTINGS.items()}, "weights",
                           help=_("Weight × value size: each weight times the size of what that key sends through "
                                  "the head (‖W_O v‖, Kobayashi et al. 2020), each row rescaled to sum to 1."))
    if choice == "weights":
        return result
    if result.parts:
        st.info(_("Weight × value size is not available for encoder-decoder models: showing the weights."))
        return result
    try:
        vw = value_weighted(model, text, result)
    except ValueError as err:
        st.info(literal(_("Weight × value size is not available for this model ({error}); showing the weights.")
                        .format(error=err)))
        return result
    st.caption(_("Showing weight × value size, renormalised per row: how much each key moves the query's output."))
    return dataclasses.replace(result, weights=vw.norms, score_records=None, measure="weight × value size")


# ---------------------------------------------------------------------------------------------- roles

def head_roles(model: str, stop: bool = True):
    """``(roles, similar)`` DataFrames of the model's heads, computed once per model for all sessions."""
    loaded = cached.get_model(model)

    def work(progress):
        progress(0.1, _("Scoring head roles…"))
        found = roles.head_roles(loaded)
        progress(0.5, _("Mapping similar heads…"))
        return found, roles.similar_heads(loaded)
    # the progress messages: in the language of who asked first (the roles are numbers)
    job = ROLES.run(model, work, _("head roles of {model}").format(model=model), lang=i18n.current())
    return cached.wait_or_stop(job, stop=stop)


def more_stats(model: str, text: str, result: AttentionResult, stats):
    """``stats`` with sink by weight / by value size and the heads' roles, where the model allows them."""
    if result.parts or cached.get_model(model).kind == "encoder-decoder":
        return stats
    try:
        sinks = values.sink_stats(value_weighted(model, text, result))
        found = head_roles(model, stop=False)[0]
    except ValueError as err:
        st.caption(literal(_("Sink by value size and head roles are not available here ({error}).").format(error=err)))
        return stats
    atlas = atlas_view.stored(model)   # the probe's names checked on real text, where an atlas is stored
    corpus = None if atlas is None or not atlas.means else labels.probe_checked(atlas, found, pairs.ROLE_CUTS)
    return pairs.stats_with(stats, sinks, found, corpus)


def similar_heads_section(model: str, chosen: list, on_select) -> None:
    if cached.get_model(model).kind == "encoder-decoder":
        st.caption(_("The similar-heads map is drawn for encoders and decoders only."))
        return
    try:
        found, similar = head_roles(model, stop=False)
    except ValueError as err:
        st.caption(literal(_("No similar-heads map for this model ({error}).").format(error=err)))
        return
    fig = plots.similar_heads(similar, pairs.role_badges(found), selected=chosen)
    show_figure(fig, "similar", "similar-heads", on_select=on_select)
    st.caption(_("Each point is a head; heads close together spread their attention alike on three sample texts "
                 "(Jensen–Shannon distance, laid out in 2-D). Hover for its roles; click a point to compare it."))
