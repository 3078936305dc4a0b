"""Navigation only: every page lives in pages/, every computation in explorer/."""
import streamlit as st

st.set_page_config(page_title="Attention explorer", page_icon="🔍", layout="wide")

pages = {
    "Explore": [
        st.Page("pages/heatmaps.py", title="Attention heatmaps", icon="🔥", default=True),
    ],
}
st.navigation(pages).run()
