"""What a page draws for one view, drawn once per server process and replayed to every session that shows it.

A class of thirty follows one teacher: thirty sessions run the same page with the same parameters at the same
moment, and each used to build the same figures, serialise the same plotly JSON and hash the same messages (the
positional-encodings lab: ~0.3 s of one interpreter a session, 9 s for the class). ``drawn_once(view, draw)`` runs
``draw`` in the first session that shows ``view`` and keeps the elements it drew (Streamlit's own record of what
a cached function draws, ``page_recorder.record``); every later session showing that view gets the same elements
drawn again (``page_replay.replay``), without running ``draw``: Shiny's ``bindCache(cache = "app")``, Streamlit's
cache replay.

The key is the view, made of the values the page has validated and would draw (a widget's value, a model name from
the registry, a text the page accepted), never the raw link: every key is a digest, so hostile or long
parameters can neither grow a key nor reach another view's entry. The store is bounded in bytes
(``EXPLORER_RENDER_CACHE_MB``, 64 by default; 0 switches replay off) and evicts whole views, oldest first; a view
asked for by many sessions at once is drawn by one of them while the others wait (``ByteLRU.get_or_compute``),
also after an eviction. Only what a page draws for its view goes through here: widgets cannot (Streamlit refuses
them inside a recording), and nothing private to a session (votes, notes, a student's own text) may be drawn
inside ``draw``.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable

from explorer.serving import regions
from explorer.serving.cache import argument_key
from explorer.ui.live import page_recorder, page_replay
from explorer.ui.live import streamlit_internals as internals
from explorer.words import i18n

STORE = regions.store("drawn")   # sized by EXPLORER_RENDER_CACHE_MB (serving/regions.py)


def view_key(*parts) -> bytes:
    """A fixed-size digest of a view's parts (plain values, tuples, small arrays by digest)."""
    return hashlib.blake2b(repr(argument_key(parts)).encode(), digest_size=20).digest()


def drawn_once(view: tuple, draw: Callable[[], None]) -> bool:
    """Draw ``draw()``'s elements for ``view`` (the running page is part of the key): the first session runs it and
    its elements are kept; every other session gets them replayed where ``draw`` would have drawn -> whether this
    call replayed. Outside a script run, or with the budget at 0, it just runs ``draw``."""
    if STORE.max_bytes <= 0 or internals.script_context() is None:
        draw()
        return False
    drew = []

    def first():
        drew.append(True)
        return page_recorder.record(draw)

    key = view_key(internals.running_page().get("script_path", ""), i18n.current(), *view)   # the language's own
    recording = STORE.get_or_compute(key, first)
    if not drew:
        page_replay.replay(recording)
    return not drew
