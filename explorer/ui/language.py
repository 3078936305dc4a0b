"""The session's language: chosen once per session, kept in its Session State, never in the process.

The first run takes ``lang=`` from the link, else the browser's language (``st.context.locale``), else English;
later runs keep the session's choice, and the sidebar's picker (``picker``) changes it. ``explorer.words.i18n._()``
reads it through the resolver that ``register`` names, called by the app's start (app.py, and ``use_app_navigation``
for a page run on its own), never as a side effect of importing this module. Work that runs in another thread
does not read it: a job carries the language it was asked in (``jobs.worker.Jobs.run(…, lang=)``).

The link carries the language (``keep_in_link``): once the session speaks another language than the link says (a
German browser on a plain link, or the picker), ``lang=`` is written into the address, so a link copied into slides
opens in that language; and every link the app builds carries it (``in_link`` for a page link's parameters,
``with_lang`` for a whole address: join links, QR codes). An English session on a link without ``lang=`` keeps its
links as they were. The page's ``<html lang>`` follows the session's language (``mark_page``), so a screen reader
reads German as German and the browser offers to translate only what is really foreign.
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st

from explorer.ui import params
from explorer.ui.live import streamlit_internals as internals
from explorer.words import i18n
from explorer.words.i18n import _

KEY = "lang"               # the link's parameter
STATE = KEY                # the session's language in its Session State, under the link's parameter name (a class
                           # follower's run must not clear it with the teacher's view: following leaves lang out)
PICKED = "_lang_picked"    # the picker's widget
MARKED = "_lang_marked"    # the language the browser's <html lang> was last set to in this session


def _session_language() -> str | None:
    if internals.script_context() is None:
        return None
    return st.session_state.get(STATE)


def register() -> None:
    """Let ``_()`` read the running session's language (each run's start calls it; a second call changes nothing)."""
    i18n.set_resolver(_session_language)


def choose() -> str:
    """At the top of every run: the session's language (from the link on the first run, or when the link names
    another one; else the browser's)."""
    asked = i18n.spoken(st.query_params.get(KEY))
    if asked is not None:
        st.session_state[STATE] = asked
    elif STATE not in st.session_state:
        st.session_state[STATE] = i18n.spoken(st.context.locale) or i18n.SOURCE
    lang = st.session_state[STATE]
    i18n.hold(lang)   # the rest of this run's _() reads it from here, not from the session's state each time
    return lang


def current() -> str:
    """The session's language (English before ``choose`` ran)."""
    return i18n.spoken(st.session_state.get(STATE)) or i18n.SOURCE


def in_link(query: dict | None = None) -> dict:
    """``query`` (a page link's parameters) with the session's ``lang`` when links carry it (``link_language``)."""
    lang = link_language()
    return {**(query or {}), KEY: lang} if lang else dict(query or {})


def with_lang(url: str) -> str:
    """A whole address (a join link, the QR code's) with ``&lang=…`` added when links carry the language."""
    lang = link_language()
    if not lang:
        return url
    return f"{url}{'&' if '?' in url else '?'}{urlencode({KEY: lang})}"


def link_language() -> str | None:
    """The language links name: the session's, unless it is English on a link that names none (then links stay
    as they were, without ``lang=``)."""
    if internals.script_context() is None:
        return None
    lang = current()
    return lang if lang != i18n.SOURCE or KEY in st.query_params else None


def keep_in_link() -> None:
    """After ``choose``: write ``lang=`` into the address when the session's language is not what the link says."""
    lang = link_language()
    if lang:
        params.put(KEY, lang)


def _picked() -> None:
    lang = i18n.spoken(st.session_state.get(PICKED)) or i18n.SOURCE
    st.session_state[STATE] = lang
    i18n.hold(lang)
    params.put(KEY, lang)   # choose() reads the link first: it must name the new language


def picker() -> None:
    """The sidebar's language menu, each language by its own name; a change reruns the page in that language and
    keeps everything else (the widgets' values live in the session, not in the language)."""
    st.session_state[PICKED] = current()
    st.sidebar.selectbox(_("Language"), list(i18n.LANGUAGES), key=PICKED, format_func=i18n.LANGUAGES.get,
                         on_change=_picked)


def mark_page() -> None:
    """Set the page's ``<html lang>`` to the session's language: a one-line script, sent when the language of
    this session's tab changes (its first run, the picker), not on every run."""
    lang = current()
    if st.session_state.get(MARKED) != lang:
        st.session_state[MARKED] = lang
        st.sidebar.html(lang_script(lang), unsafe_allow_javascript=True)


def lang_script(lang: str) -> str:
    """The script of :func:`mark_page`. Nothing a user sends can enter it: ``lang`` must be one of the app's
    language codes (``i18n.LANGUAGES``), else ValueError."""
    if not isinstance(lang, str) or lang not in i18n.LANGUAGES:
        raise ValueError(f"not a language of the app: {lang!r}")
    return ("<script>(window.parent && window.parent.document ? window.parent.document : document)"
            f".documentElement.lang = {json.dumps(lang)};</script>")
