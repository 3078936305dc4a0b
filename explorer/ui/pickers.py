"""Deep-linked pickers of words and heads for the flip and compare-heads pages (see ``ui`` for the others).

Each takes its value from the URL or the session (``ui.from_url``), repairs a value that does not fit the text
or the model with a visible note, and writes the choice back to the URL.
"""
from __future__ import annotations

import streamlit as st

from explorer.attention.heads import head_id, match_word, parse_heads, pick_word
from explorer.ui import params
from explorer.ui.widgets import from_url, link_note
from explorer.ui.words import tip


def word_picker(label: str, key: str, options: list[str], default: str, token_words: list[str] | None = None) -> str:
    """A deep-linked select box over the text's words; a word the text lacks falls back to ``default`` with a note.

    ``token_words[i]`` is the word at token position i: a position (as the heatmap page links its query) picks it.
    """
    raw = str(from_url(key, default))
    if token_words and raw.isdigit() and int(raw) < len(token_words) and match_word(options, token_words[int(raw)]):
        raw = token_words[int(raw)]
    value = pick_word(options, raw, default)
    if match_word(options, raw) is None and options:
        link_note(f"{label}: {raw[:40]!r} is not a word of the text; using {value!r}.")
    st.session_state[key] = value
    chosen = st.selectbox(label, options, key=key, help=tip(label))
    params.put(key, chosen)
    return chosen


def words_picker(label: str, key: str, options: list[str], default: list[str], most: int = 2) -> list[str]:
    """A deep-linked multiselect of words (``a,b`` in the URL); words the text lacks are dropped with a note."""
    raw = from_url(key, default)
    wanted = [w.strip() for w in (raw.split(",") if isinstance(raw, str) else raw) if w.strip()]
    missing = [w for w in wanted if match_word(options, w) is None]
    if missing:
        link_note(f"{label}: {', '.join(repr(m[:30]) for m in missing)} not in the text; dropped.")
    st.session_state[key] = list(dict.fromkeys(filter(None, (match_word(options, w) for w in wanted))))[:most]
    chosen = st.multiselect(label, options, key=key, max_selections=most, help=tip(label))
    params.put(key, ",".join(chosen))
    return chosen


def heads_picker(label: str, key: str, n_layers: int, n_heads: int, default: list[tuple[int, int]],
                 most: int = 4) -> list[tuple[int, int]]:
    """Deep-linked choice of up to ``most`` heads (``L4H0,L2H3`` in the URL), clamped to the model with a note."""
    raw = from_url(key, ",".join(head_id(h) for h in default))
    heads, notes = parse_heads(raw if isinstance(raw, str) else ",".join(raw), n_layers, n_heads, most)
    for message in notes:
        link_note(message)
    st.session_state[key] = [head_id(h) for h in heads]
    options = [head_id((l, h)) for l in range(n_layers) for h in range(n_heads)]
    chosen = st.multiselect(label, options, key=key, max_selections=most,
                            format_func=lambda s: s.replace("L", "layer ").replace("H", " · head "))
    params.put(key, ",".join(chosen))
    return parse_heads(",".join(chosen), n_layers, n_heads, most)[0]
