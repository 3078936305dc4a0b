"""Attention heatmaps: one real model, one text, one layer and head."""
import streamlit as st

from explorer import cached, plots
from explorer.examples import ANIMAL_TIRED
from explorer.models import EMBEDDED, ModelUnavailable

st.title("Attention heatmaps")
st.caption("Each row is a query token; the row shows how that token spreads its attention over the key tokens.")

model = st.selectbox("Model", list(EMBEDDED), format_func=lambda n: EMBEDDED[n].label)
text = st.text_area("Text", ANIMAL_TIRED, max_chars=20_000)

try:
    result = cached.get_attention(model, text)
except (ValueError, ModelUnavailable) as err:
    st.warning(str(err))
    st.stop()

facts = result.facts
if result.truncated:
    st.info(f"The text needs {result.n_text_tokens} tokens; only the first {len(result.tokens)} are shown.")
left, right = st.columns(2)
layer = left.slider("Layer", 0, facts.n_layers - 1, 0)
head = right.slider("Head", 0, facts.n_heads - 1, 0)

hidden = plots.causal_hidden(len(result.tokens), len(result.keys)) if facts.causal else None
fig = plots.heatmap(result.weights[layer, head], result.tokens, result.keys, masked=hidden,
                    title=f"{facts.name} · layer {layer} · head {head}")
st.plotly_chart(fig, key="heatmap")
if result.fidelity is not None:
    st.success(f"✔ Recomputed from the model's own queries and keys: max difference "
               f"{result.fidelity[layer, head]:.1e}")
