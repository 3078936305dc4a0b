"""Controls the teacher drives, folded away while a student follows.

A following student's model, text, layer, head and options are the teacher's (``classroom.navigation`` applies
them); on a phone they would push the page's first figure a screen and a half down. ``teacher_driven`` draws them
inside a closed expander whose label says what they are set to ("layer 2 · head 3 · your teacher's text"); one tap
opens them. For everyone else it is a plain container: the page looks as it always did.
"""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from explorer.ui.live import membership
from explorer.ui.text import literal
from explorer.words.i18n import N_, _

LONGEST = 24   # characters of one value in the summary (a word, a model's short name)
# the labels and texts pages pass (English), for the catalogues; ``summary`` shows each in the reader's language
LABELS = (N_("layer"), N_("head"), N_("heads"), N_("query"), N_("map"), N_("colour by"), N_("positions"),
          N_("anchor"), N_("your teacher's text"), N_("your teacher's sentences"), N_("your teacher's prompt"))


def _value(key: str, names: Mapping[str, str] | None = None) -> str | None:
    """The control's value as this run starts: its widget state, else its deep link (the teacher's, applied),
    cut to ``LONGEST`` characters; a value ``names`` has (English, shown through ``_()``) is shown whole by its
    name, as its widget shows it."""
    value = st.session_state.get(key, st.query_params.get(key))
    if isinstance(value, (list, tuple)):
        value = ", ".join(map(str, value))
    if value is None or value == "" or isinstance(value, dict):
        return None
    if names and str(value) in names:
        return _(names[str(value)])   # the app's own words: whole
    text = str(value).split("/")[-1]   # a hub id's model name
    return text if len(text) <= LONGEST else text[:LONGEST - 1] + "…"


Key = str | tuple[str, str] | tuple[str, str, Mapping[str, str]]


def summary(keys: tuple[Key, ...], text: str | None) -> str:
    """'layer 2 · head 3 · your teacher's text': each of ``keys`` (a key; a (label, key) pair; or (label, key,
    names), names mapping a value to what its widget calls it) named with its value, then ``text``; every value
    shown literally (a link can hold anything)."""
    named = [(k, k, None) if isinstance(k, str) else (*k, None)[:3] for k in keys]
    parts = [_(label) + " " + literal(value) for label, key, names in named
             if (value := _value(key, names)) is not None]
    return " · ".join([*parts, *([_(text)] if text else [])]) or _("your teacher's settings")


def teacher_driven(*keys: Key, text: str | None = "your teacher's text"):
    """The container for the controls a teacher drives: ``controls = teacher_driven("layer", "head")``, then
    ``with controls:`` as often as the page needs (messages drawn in between stay outside, in view). Following: a
    closed expander labelled with the controls' values (see ``summary``); otherwise a plain container. Widgets keep
    their keys, so their values survive a student's switch between following and exploring."""
    if not membership.is_following():
        return st.container()
    folded = st.expander(summary(keys, text), icon=":material/cast_for_education:")
    folded.caption(_("Your teacher sets these while you follow. To try your own, press “Explore on my own”."))
    return folded
