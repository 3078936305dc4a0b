"""Navigation only: every page lives in pages/, every computation in explorer/.

Icons are emoji on purpose: Streamlit's :material/…: icons come from a font CDN and are blank offline.
"""
import streamlit as st

st.set_page_config(page_title="Attention explorer", page_icon="🔍", layout="wide")

pages = {
    "Start": [
        st.Page("pages/home.py", title="Home", icon="🏠", default=True),
    ],
    "Explore real models": [
        st.Page("pages/heatmaps.py", title="Attention heatmaps", icon="🔥"),
        st.Page("pages/flip.py", title="Antecedent flip", icon="🔁"),
        st.Page("pages/compare.py", title="Compare heads", icon="🧭"),
    ],
    "Concepts": [
        st.Page("pages/lab_worked_example.py", title="Worked example", icon="✏️"),
        st.Page("pages/lab_softmax.py", title="Softmax saturation", icon="🌡️"),
        st.Page("pages/lab_permutation.py", title="Permutation", icon="🔀"),
        st.Page("pages/lab_positions.py", title="Positional encodings", icon="📍"),
        st.Page("pages/lab_masks.py", title="Masks", icon="🎭"),
        st.Page("pages/lab_block.py", title="Heads and the block", icon="🧱"),
        st.Page("pages/lab_why_attention.py", title="Why attention", icon="🛤️"),
    ],
}
st.navigation(pages).run()
