"""Every deep-linked picker: the model, a layer or head (``index_picker``), a token, a choice, a number on a
slider, the attention part, the text's words and a set of heads.

Each takes its value from the URL or the session (``widgets.from_url``), repairs a value that does not fit the text
or the model with a visible note, and writes the choice back to the URL.
"""
from __future__ import annotations

import streamlit as st

from explorer.attention.heads import head_id, match_word, parse_heads, pick_word
from explorer.model import preview
from explorer.model.registry import EMBEDDED, EMBEDDED_ENCODER, KNOWN_HUB, hub_policy
from explorer.ui import params
from explorer.ui.linkask import ask_before_loading, picked_waits, show_what_works
from explorer.ui.widgets import from_url, link_note
from explorer.ui.words import tip
from explorer.words.i18n import N_, _

OTHER = "Other hub id or folder…"   # the model menu's last entry (its value; shown through _()): a free box


def model_picker(key: str = "model", default: str = EMBEDDED_ENCODER, label: str | None = None) -> str:
    """Embedded models first, then known hub ids, then a free box for any hub id or local folder.

    A hub model this server would have to download, named by the link, picked or typed, waits for the student's
    "Load it" (``linkask.py``: its family, size and what works, before any download); meanwhile the page shows
    the model it showed before (``default`` at first). A local folder loads at once, with its caption.
    """
    asked = ask_before_loading(key, default)
    shown = st.session_state.get(f"_shown_{key}", default)
    allowed, allowlist = hub_policy()
    hub = ([*(allowlist or KNOWN_HUB), OTHER] if allowed else [])
    choices = [*EMBEDDED, *[h for h in hub if h not in EMBEDDED]]
    wanted = str(from_url(key, default))
    free = ""
    if wanted not in choices:
        if allowed and not allowlist and wanted.strip():
            free, st.session_state[key] = wanted, OTHER
        else:
            link_note(_("Model {model} is not offered here; showing {default}.").format(model=repr(wanted[:80]),
                                                                                        default=default))
            st.session_state[key] = default
    label_of = {**{n: _(s.label) for n, s in EMBEDDED.items()}, OTHER: _("Other hub id or folder…"),
                **{n: _("{model} · {about} · hub (needs network)").format(model=n, about=d)
                   for n, (_kind, d) in KNOWN_HUB.items()}}
    choice = st.selectbox(label or _("Model"), choices, key=key, format_func=lambda n: label_of.get(n, n))
    name = choice
    if choice == OTHER:
        # the free box's text follows the student from page to page as from_url's values do (set through the
        # Session State API); a model named by the link, a follow or "Stay on" replaces it
        other = f"{key}_other"
        st.session_state[other] = free or st.session_state.get(other, st.session_state.get(f"_typed_{key}", ""))
        name = st.text_input(_("Hub id (e.g. prajjwal1/bert-tiny) or local folder"), key=other, max_chars=200,
                             help=preview.curated_text() if allowed and not allowlist else None).strip()
        st.session_state[f"_typed_{key}"] = name
    if name and picked_waits(key, name, shown):
        name = shown
    elif choice == OTHER and name:
        show_what_works(name)
    name = name or default
    st.session_state[f"_shown_{key}"] = name
    params.put(key, asked or name)   # a reload of a link still waiting asks again
    return name

def choice_picker(label: str, key: str, choices: dict[str, str], default: str, help: str | None = None) -> str:
    """One of ``choices`` (value -> label) as horizontal radio buttons, deep-linked; a value in the link that is
    not a choice falls back to ``default``."""
    from_url(key, default)
    if st.session_state[key] not in choices:
        st.session_state[key] = default
    choice = st.radio(label, list(choices), key=key, format_func=choices.get, horizontal=True,
                      help=help or tip(label))
    params.put(key, choice)
    return choice

def parse_index(raw, label: str, default: int, what: str = N_("a number")) -> int:
    """``raw`` from a link as an int, or ``default`` with a visible note (``what``: English, marked ``N_``)."""
    try:
        return int(raw)
    except (TypeError, ValueError):
        link_note(_("{label} {value} in the link is not {what}; using {default}.").format(
            label=label, value=repr(str(raw)[:40]), what=_(what), default=default))
        return default

def index_picker(label: str, key: str, count: int, default: int = 0, widget: str = "slider") -> int:
    """An integer in [0, count) from a slider or number box, deep-linked and clamped with a note; a label that
    names a glossary term ("Layer", "Head") explains it in the widget's help."""
    value = parse_index(from_url(key, default), label, default)
    if not 0 <= value < count:
        clamped = min(max(value, 0), count - 1)
        link_note(_("{label} {value} is out of range (0–{last}); showing {clamped}.").format(
            label=label, value=value, last=count - 1, clamped=clamped))
        value = clamped
    st.session_state[key] = value
    if count <= 1:
        st.caption(_("{label}: 0 (the only one)").format(label=label))
        result = 0
    elif widget == "slider":
        result = st.slider(label, 0, count - 1, key=key, help=tip(label))
    else:
        result = st.number_input(label, 0, count - 1, step=1, key=key, help=tip(label))
    params.put(key, str(result))
    return int(result)

def option_picker(label: str, key: str, options: list, default):
    """A select slider over ``options`` (numbers), deep-linked: a linked number that is not an option becomes the
    nearest one; anything else falls back to ``default`` with a note."""
    raw = from_url(key, default)
    try:
        value = min(options, key=lambda o: abs(o - float(raw)))
    except (TypeError, ValueError):
        link_note(_("{label} {value} in the link is not a number; using {default}.").format(
            label=label, value=repr(str(raw)[:40]), default=default))
        value = default
    st.session_state[key] = value
    chosen = st.select_slider(label, options, key=key, help=tip(label))
    params.put(key, str(chosen))
    return chosen

def token_picker(label: str, key: str, rows: list[list[int]], names: list[str], default: int,
                 tokens: tuple[str, ...] = ()) -> int:
    """A deep-linked select box over the rows of a matrix view; returns the chosen row.

    The URL holds a token *position* (stable when special tokens are hidden or sub-tokens merged): a position
    inside a merged word picks that word, a hidden one the nearest row; out of range is clamped with a note.
    When ``tokens`` (the text's tokens) change, the choice goes back to ``default``: a position picked in one
    sentence means nothing in the next.
    """
    firsts = [r[0] for r in rows]
    seen = st.session_state.get(f"_tokens_{key}")
    st.session_state[f"_tokens_{key}"] = tuple(tokens)
    if seen is not None and seen != tuple(tokens):
        st.session_state[key] = st.session_state[params.kept(key)] = default
    value = parse_index(from_url(key, default), label, default, N_("a token position"))
    last = max(max(r) for r in rows)
    if not 0 <= value <= last:
        link_note(_("{label} position {value} is out of range (0–{last}); showing the nearest token.").format(
            label=label, value=value, last=last))
    row = next((i for i, r in enumerate(rows) if value in r), None)
    if row is None:
        row = min(range(len(rows)), key=lambda i: abs(firsts[i] - value))
    st.session_state[key] = firsts[row]
    chosen = st.selectbox(label, firsts, key=key, help=tip(label),
                          format_func=lambda p: _("{token}  ·  position {position}").format(
                              token=names[firsts.index(p)], position=p))
    params.put(key, str(chosen))
    return firsts.index(chosen)

def part_picker(parts: dict[str, str], key: str = "part", default: str = "encoder") -> str:
    """For encoder-decoder models: which attention to show (deep-linked; an unknown value falls back)."""
    raw = str(from_url(key, default))
    if raw not in parts:
        link_note(_("Attention part {part} does not exist; showing {default}.").format(part=repr(raw[:30]),
                                                                                       default=parts[default]))
        raw = default
    st.session_state[key] = raw
    chosen = st.radio(_("Attention"), list(parts), key=key, format_func=parts.get, horizontal=True)
    params.put(key, chosen)
    return chosen


def word_picker(label: str, key: str, options: list[str], default: str, token_words: list[str] | None = None) -> str:
    """A deep-linked select box over the text's words; a word the text lacks falls back to ``default`` with a note.

    ``token_words[i]`` is the word at token position i: a position (as the heatmap page links its query) picks it.
    """
    raw = str(from_url(key, default))
    if token_words and raw.isdigit() and int(raw) < len(token_words) and match_word(options, token_words[int(raw)]):
        raw = token_words[int(raw)]
    value = pick_word(options, raw, default)
    if match_word(options, raw) is None and options:
        link_note(_("{label}: {word} is not a word of the text; using {value}.").format(
            label=label, word=repr(raw[:40]), value=repr(value)))
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
        link_note(_("{label}: {words} not in the text; dropped.").format(
            label=label, words=", ".join(repr(m[:30]) for m in missing)))
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
                            format_func=_head_words)
    params.put(key, ",".join(chosen))
    return parse_heads(",".join(chosen), n_layers, n_heads, most)[0]


def _head_words(head: str) -> str:
    """"L4H0" as "layer 4 · head 0", in the session's language."""
    layer, head_index = head.lstrip("L").split("H")
    return _("layer {layer} · head {head}").format(layer=layer, head=head_index)
