"""The class's own sentences: one padded batch through the page's model (``batch``), what one head does across them
in words and as a class question (``head_in_words``). No Streamlit, no plotly."""
