"""Writing the page's deep link (query parameters), only when it changes.

Streamlit sends the whole query string to the browser on every write to ``st.query_params``, even an unchanged
one, and the browser re-renders the whole app for each such message. A page that wrote its six parameters on
every rerun (the heatmap page) cost every rerun six messages and six re-renders, and a following class paid that
on each follower for every change of the teacher's.
"""
from __future__ import annotations

import streamlit as st


def put(key: str, value: str) -> None:
    """Set query parameter ``key`` to ``value``; nothing is sent when it already holds it."""
    if st.query_params.get_all(key) != [value]:
        st.query_params[key] = value


def put_all(values: dict[str, str]) -> None:
    """Set several parameters with at most one message: only those whose value changes."""
    changed = {k: v for k, v in values.items() if st.query_params.get_all(k) != [v]}
    if changed:
        st.query_params.update(changed)


def drop(key: str) -> None:
    """Remove query parameter ``key`` if it is there."""
    if key in st.query_params:
        del st.query_params[key]
