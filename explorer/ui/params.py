"""Writing the page's deep link (query parameters), only when it changes, and never losing a change.

Streamlit sends the whole query string to the browser on every write to ``st.query_params``, even an unchanged
one, and the browser re-renders the whole app for each such message. A page that wrote its six parameters on
every rerun (the heatmap page) cost every rerun six messages and six re-renders, and a following class paid that
on each follower for every change of the teacher's.

Writing only changes needs one guarantee: that the browser got the last write. Streamlit updates the session's
parameters first and only then queues the message, and queueing is where a pending rerun stops the run. A rerun
requested at that moment (a teacher moving on, the class watcher) leaves the server believing in an address the
browser never received, and the next run, finding the parameter already set, would send nothing: the browser
keeps the old address (seen as followers on the heatmap page with the flip page's parameters). So a write cut
off that way is remembered for the session, and its next run sends the whole address again (``mend``).
"""
from __future__ import annotations

import contextlib

import streamlit as st

from explorer.ui.live import streamlit_internals as internals

_cut_off: set[str] = set()   # ids of sessions whose last address message a rerun or stop cut off
KEPT = "_kept_"   # a page parameter's value is kept under KEPT + its name across pages (``widgets.from_url``)


def kept(name: str) -> str:
    """The session-state key under which page parameter ``name``'s value is kept across pages."""
    return KEPT + name


@contextlib.contextmanager
def _sending():
    try:
        yield
    except internals.STOPS:
        session = internals.session_id()
        if session is not None:
            _cut_off.add(session)
        raise


def mend() -> None:
    """At the start of a run: if a write of the address was cut off in an earlier run, send the whole address
    again (one message), so the browser holds what this session believes it holds."""
    session = internals.session_id()
    if session is not None and session in _cut_off:
        _cut_off.discard(session)
        with _sending():
            st.query_params.from_dict(st.query_params.to_dict())


def put(key: str, value: str) -> None:
    """Set query parameter ``key`` to ``value``; nothing is sent when it already holds it."""
    if st.query_params.get_all(key) != [value]:
        with _sending():
            st.query_params[key] = value


def put_all(values: dict[str, str]) -> None:
    """Set several parameters with at most one message: only those whose value changes."""
    changed = {k: v for k, v in values.items() if st.query_params.get_all(k) != [v]}
    if changed:
        with _sending():
            st.query_params.update(changed)


def send(values: dict[str, str]) -> None:
    """Make the address exactly ``values`` with one message, sent even when the session believes the browser holds
    it already (for a rerun that the server started, that belief is the address of the session's last finished
    script thread, which can be older than what the browser was sent since)."""
    with _sending():
        st.query_params.from_dict(values)


def drop(key: str) -> None:
    """Remove query parameter ``key`` if it is there."""
    if key in st.query_params:
        with _sending():
            del st.query_params[key]
