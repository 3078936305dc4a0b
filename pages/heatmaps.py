"""Attention heatmaps: one real model, one text, one layer and head."""
import streamlit as st

from explorer import plots, ui

st.title("Attention heatmaps")
st.caption("Each row is a query token; the row shows how that token spreads its attention over the key tokens.")

model = ui.model_picker()
text = ui.text_box()
result = ui.attention_or_stop(model, text)
facts = result.facts
left, right = st.columns(2)
with left:
    layer = ui.index_picker("Layer", "layer", facts.n_layers)
with right:
    head = ui.index_picker("Head", "head", facts.n_heads)
ui.show_link_notes()

hidden = plots.causal_hidden(len(result.tokens), len(result.keys)) if facts.causal else None
fig = plots.heatmap(result.weights[layer, head], result.tokens, result.keys, masked=hidden,
                    title=f"{facts.name} · layer {layer} · head {head}")
st.plotly_chart(fig, key="heatmap")
ui.fidelity_badge(result, layer, head)
