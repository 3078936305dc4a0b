"""Accessibility in the core: charts said in words (``summary.py``) and colour scales checked against red–green
colour blindness (``colour.py``). Arrays in, text and numbers out; never Streamlit, never plotly."""
