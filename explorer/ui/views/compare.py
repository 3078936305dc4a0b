"""The Compare heads page's side-by-side heatmaps: two to four heads on one colour scale, each with its fidelity,
its CSV and a link to one of its scores taken apart."""
from __future__ import annotations

import streamlit as st

from explorer.attention import heads, matrices
from explorer.attention.result import AttentionResult
from explorer.maths import causal_mask
from explorer.plots import attention as plots
from explorer.ui import widgets as ui
from explorer.ui.views import atlas as atlas_view
from explorer.ui.views import breakdown_link as breakdown
from explorer.words import numbers
from explorer.words.i18n import _


def side_by_side(model: str, text: str, result: AttentionResult, chosen: list[tuple[int, int]]) -> None:
    """The ``chosen`` (layer, head) pairs of ``result``, two per row (labels stay readable), on one colour scale."""
    if not chosen:
        return
    facts = result.facts
    zmax = max(float(result.weights[l, h].max()) for l, h in chosen)
    hidden = ~causal_mask(len(result.tokens), len(result.keys)) if facts.causal else None
    st.caption(_("One colour scale for all: 0 to {zmax} (the largest weight among these heads).").format(
        zmax=numbers.number(zmax, 2)))
    query = matrices.default_query(result)   # each head's link takes apart this row's strongest score
    columns = [c for _row in range(0, len(chosen), 2) for c in st.columns(2)]  # two per row: labels stay readable
    for i, (column, (l, h)) in enumerate(zip(columns, chosen)):
        with column:
            key = breakdown.strongest_key(result.weights[l, h, query])   # framed: the cell its link takes apart
            fig = plots.heatmap(result.weights[l, h], result.tokens, result.keys, zmax=zmax, masked=hidden, cell=(
                query, key), title=_("layer {layer} · head {head}").format(layer=l, head=h),
                show_scale=i % 2 == 1 or i == len(chosen) - 1)
            ui.show_figure(fig, f"heat_{i}", f"{facts.name}-L{l}H{h}")
            atlas_view.fidelity_and_names(model, result, (l, h))   # a head the lessons name: does real text agree?
            ui.download_csv(heads.matrix_frame(result.weights[l, h], result.tokens, result.keys),
                            f"{facts.name}-L{l}H{h}.csv", f"csv_{i}", "CSV")
            breakdown.cell_link(model, text, (l, h), result.weights[l, h], result.tokens, query, key, result.keys)
