"""The session's language: chosen once per session, kept in its Session State, never in the process.

The first run takes ``lang=`` from the link, else the browser's language (``st.context.locale``), else English;
later runs keep the session's choice. ``explorer.words.i18n._()`` reads it through the resolver registered here.
"""
from __future__ import annotations

import streamlit as st

from explorer.ui.live import streamlit_internals as internals
from explorer.words import i18n

KEY = "lang"


def _session_language() -> str | None:
    if internals.script_context() is None:
        return None
    return st.session_state.get(KEY)


i18n.set_resolver(_session_language)


def choose() -> str:
    """At the top of every run: the session's language (from the link on the first run, or when the link names
    another one; else the browser's)."""
    asked = i18n.known(st.query_params.get(KEY))
    if asked is not None:
        st.session_state[KEY] = asked
    elif KEY not in st.session_state:
        st.session_state[KEY] = i18n.known(st.context.locale) or i18n.SOURCE
    return st.session_state[KEY]
