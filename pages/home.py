"""Home: what the explorer is, where everything lives, and one example to click."""
import streamlit as st

from explorer.examples import FLIP_PAIRS
from explorer.model import loading, registry
from explorer.ui import widgets as ui
from explorer.ui.views import lessons

ui.use_app_navigation()
st.title("Attention explorer")
st.markdown(
    "Look inside the attention of real transformer models, one head at a time. Type a sentence, pick a layer "
    "and a head, and see which words each word attends to. Every weight shown comes from the model itself, "
    "and each head is checked against our own from-scratch recompute of softmax(QKᵀ/√d_k).")
lessons.home_section()   # the lessons first, each one click from running with a class

EXPLORE = [
    ("pages/heatmaps.py", "Attention heatmaps", ":material/grid_on:",
     "one layer and head of a real model on your text"),
    ("pages/flip.py", "Antecedent flip", ":material/swap_horiz:",
     "change one word: which heads move *it* from animal to street?"),
    ("pages/compare.py", "Compare heads", ":material/compare:",
     "heads side by side, statistics for every head, common patterns"),
]
CONCEPTS = [
    ("pages/lab_why_attention.py", "Why attention", ":material/route:",
     "path length and parallel work versus recurrence"),
    ("pages/lab_worked_example.py", "Worked example", ":material/edit_note:",
     "queries, keys and values by hand, step by step"),
    ("pages/lab_softmax.py", "Softmax saturation", ":material/thermostat:",
     "why the scores are divided by √d_k"),
    ("pages/lab_permutation.py", "Permutation", ":material/shuffle:",
     "without positions, attention ignores word order"),
    ("pages/lab_positions.py", "Positional encodings", ":material/place:",
     "sinusoidal, learned and rotary positions"),
    ("pages/lab_masks.py", "Masks", ":material/visibility_off:",
     "who may look at whom: causal and padding masks"),
    ("pages/lab_block.py", "Heads and the block", ":material/layers:",
     "multi-head split, residuals and layer norm"),
]

a, b, query, candidates = FLIP_PAIRS[next(iter(FLIP_PAIRS))]
with st.container(border=True):
    st.markdown("**Try it:** in *“The animal didn't cross the street because it was too tired”*, what does *it* "
                "refer to? Change *tired* to *wide* and the answer changes. Do the model's heads notice?")
    ui.page_link("pages/flip.py", "Open the flip demo", icon=":material/arrow_forward:",
                 query_params={"model": registry.EMBEDDED_ENCODER, "text": a, "text_b": b, "query": query,
                               "cands": ",".join(candidates)})

left, right = st.columns(2)
for column, title, entries in ((left, "Explore: real models", EXPLORE), (right, "Concepts: the labs", CONCEPTS)):
    with column:
        st.subheader(title)
        for page, label, icon, about in entries:
            ui.page_link(page, label, icon=icon)
            st.caption(about)

left, right = st.columns(2)
with left:
    st.subheader("Embedded models")
    st.caption("Shipped with the app, so they work offline. Hub models load when the server allows it.")
    for spec in registry.EMBEDDED.values():
        st.markdown(f"- **{spec.name}** ({spec.kind}): {spec.about}")
with right:
    st.subheader("Device")
    st.markdown(f"Models run on **{loading.device_label(loading.best_device())}**.")
