"""Attention explorer: everything that computes (models, attention, maths, plots) and never needs Streamlit."""
