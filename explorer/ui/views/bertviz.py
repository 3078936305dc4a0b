"""bertviz's own views inside a page: built offline (explorer.plots.bertviz) and capped to what a browser can hold."""
from __future__ import annotations

import streamlit as st

from explorer.attention import matrices
from explorer.plots import bertviz
from explorer.words.i18n import _


def show_bertviz(result, part: str, layer: int) -> None:
    """bertviz's head view and model view of ``part`` around ``layer``, offline, as many layers as the text allows."""
    res = matrices.part_of(result, part)
    n, (n_layers, n_heads) = max(len(res.tokens), len(res.keys)), res.weights.shape[:2]
    for view, build in (("head", bertviz.head_view_html), ("model", bertviz.model_view_html)):
        layers = bertviz.bertviz_layers(view, n, n_layers, n_heads, layer) or [layer]
        try:
            page = build(result, layers=layers, **({"layer": layer} if view == "head" else {}))
        except ValueError as err:
            st.info(str(err), icon=":material/content_cut:")
            continue
        if len(layers) < n_layers:
            said = (_("The bertviz head view holds layers {first}–{last} only: all {n_layers} layers of {n} tokens "
                      "would be too heavy for the browser.") if view == "head" else
                    _("The bertviz model view holds layers {first}–{last} only: all {n_layers} layers of {n} tokens "
                      "would be too heavy for the browser."))
            st.caption(said.format(first=layers[0], last=layers[-1], n_layers=n_layers, n=n))
        st.iframe(page, height=bertviz.bertviz_height(view, n, len(layers), n_heads))
