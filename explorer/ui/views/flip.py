"""The flip page's close-up: one head in sentence A and in sentence B, side by side on the same scales."""
from __future__ import annotations

import functools

import streamlit as st

from explorer.attention import analysis, heads
from explorer.attention.result import AttentionResult
from explorer.plots import attention as plots
from explorer.plots import heads as head_plots
from explorer.ui import widgets as ui
from explorer.ui.views import atlas as atlas_view
from explorer.ui.views import breakdown_link as breakdown
from explorer.words import numbers
from explorer.words.i18n import _


def show_head_in_both(model: str, a: AttentionResult, b: AttentionResult, result: analysis.FlipResult, layer: int,
                      head: int) -> None:
    """Heatmaps, the query's bars and CSVs of head ``(layer, head)`` in both texts, each with a link that takes
    apart, on the heatmap page, the score of the query and the candidate the head leans to in that sentence; for a
    causal model whose query cannot see the change, also their difference (zero on the query's row)."""
    rows = {"A": analysis.query_rows(a, result.query), "B": analysis.query_rows(b, result.query)}
    same = heads.max_row_difference(a.weights[layer, head], b.weights[layer, head], rows["A"])
    label = "" if result.query_sees_change else _("identical in A and B (max diff {diff})").format(
        diff=numbers.scientific(same, 0))
    st.subheader(_("Layer {layer} · head {head}").format(layer=layer, head=head))
    lean = {side: analysis.leaned_candidate(res, layer, head, rows[side], result.candidates)   # the link's key
            for side, res in (("A", a), ("B", b))}

    @functools.cache
    def figures() -> tuple[dict, dict]:
        figs, bars = {}, {}
        for side, res in (("A", a), ("B", b)):
            figs[side] = head_plots.flip_heatmap(res.weights[layer, head], res.tokens, res.keys,
                                                  query_rows=rows[side], changed=result.first_difference,
                                                  causal=a.facts.causal, row_label=label,
                                                  cell=(rows[side][0], lean[side]),
                                                  title=_("Sentence {side} · layer {layer} · head {head}").format(
                                                      side=side, layer=layer, head=head))
            bars[side] = plots.query_bars(res.weights[layer, head, rows[side]].mean(0), res.keys,
                                          f"{result.query} ({side})")
        head_plots.same_x_range(*bars.values())
        return figs, bars

    view = (model, a.text, b.text, result.query, tuple(result.candidates), layer, head)
    for column, (side, res) in zip(st.columns(2), (("A", a), ("B", b))):
        with column:
            ui.show_figure(lambda s=side: figures()[0][s], f"heat_{side}", f"flip-{side}-L{layer}H{head}", view=view)
            ui.fidelity_badge(res, layer, head)
            if side == "A":   # the head's behaviour on real text, once, and the app's name for it checked there
                atlas_view.head_profile(model, (layer, head))
                atlas_view.named_verdict(model, (layer, head))
            ui.download_csv(lambda r=res: heads.matrix_frame(r.weights[layer, head], r.tokens, r.keys),
                            f"flip-{side}-L{layer}H{head}.csv", f"csv_{side}")
            breakdown.cell_link(model, res.text, (layer, head), res.weights[layer, head], res.tokens, rows[side][0],
                                lean[side], keys=res.keys)
            ui.show_figure(lambda s=side: figures()[1][s], f"bars_{side}", f"flip-{side}-bars-L{layer}H{head}",
                           view=view)
    if not result.query_sees_change and a.weights.shape == b.weights.shape:
        ui.show_figure(lambda: head_plots.difference_heatmap(a.weights[layer, head], b.weights[layer, head], a.tokens,
                                                             a.keys), "diff", f"flip-difference-L{layer}H{head}",
                       view=view)
