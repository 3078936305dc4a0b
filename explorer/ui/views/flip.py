"""The flip page's close-up: one head in sentence A and in sentence B, side by side on the same scales."""
from __future__ import annotations

import streamlit as st

from explorer.attention import analysis, heads
from explorer.attention.result import AttentionResult
from explorer.plots import attention as plots
from explorer.plots import heads as head_plots
from explorer.ui import widgets as ui
from explorer.ui.views import breakdown_link as breakdown


def show_head_in_both(model: str, a: AttentionResult, b: AttentionResult, result: analysis.FlipResult, layer: int,
                      head: int) -> None:
    """Heatmaps, the query's bars and CSVs of head ``(layer, head)`` in both texts, each with a link that takes
    apart, on the heatmap page, the score of the query and the candidate the head leans to in that sentence; for a
    causal model whose query cannot see the change, also their difference (zero on the query's row)."""
    rows = {"A": analysis.query_rows(a, result.query), "B": analysis.query_rows(b, result.query)}
    same = heads.max_row_difference(a.weights[layer, head], b.weights[layer, head], rows["A"])
    label = "" if result.query_sees_change else f"identical in A and B (max diff {same:.0e})"
    st.subheader(f"Layer {layer} · head {head}")
    figs, bars, lean = {}, {}, {}
    for side, res in (("A", a), ("B", b)):
        lean[side] = analysis.leaned_candidate(res, layer, head, rows[side], result.candidates)   # the link's key
        figs[side] = head_plots.flip_heatmap(res.weights[layer, head], res.tokens, res.keys, query_rows=rows[side],
                                              changed=result.first_difference, causal=a.facts.causal, row_label=label,
                                              title=f"Sentence {side} · layer {layer} · head {head}",
                                              cell=(rows[side][0], lean[side]))
        bars[side] = plots.query_bars(res.weights[layer, head, rows[side]].mean(0), res.keys,
                                      f"{result.query} ({side})")
    head_plots.same_x_range(*bars.values())
    for column, (side, res) in zip(st.columns(2), (("A", a), ("B", b))):
        with column:
            ui.show_figure(figs[side], f"heat_{side}", f"flip-{side}-L{layer}H{head}")
            ui.fidelity_badge(res, layer, head)
            ui.download_csv(heads.matrix_frame(res.weights[layer, head], res.tokens, res.keys),
                            f"flip-{side}-L{layer}H{head}.csv", f"csv_{side}")
            breakdown.cell_link(model, res.text, (layer, head), res.weights[layer, head], res.tokens, rows[side][0],
                                lean[side], keys=res.keys)
            ui.show_figure(bars[side], f"bars_{side}", f"flip-{side}-bars-L{layer}H{head}")
    if not result.query_sees_change and a.weights.shape == b.weights.shape:
        fig = head_plots.difference_heatmap(a.weights[layer, head], b.weights[layer, head], a.tokens, a.keys)
        ui.show_figure(fig, "diff", f"flip-difference-L{layer}H{head}")
