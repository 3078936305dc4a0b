"""What the concept labs' pages share on screen: tabs named in the session's language whose link keeps a stable
English id, and the note that an English model's example sentence stays English."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer import maths
from explorer.labs import real_model
from explorer.labs.notation import format_weights
from explorer.ui import params
from explorer.ui.drawn_once import drawn_once
from explorer.words import numbers
from explorer.words.i18n import _


def english_only(model: str) -> str:
    """A sentence box's help: the model reads English, so its example (and what a student types) stays English."""
    return _("{model} was trained on English text: its example stays English, and English sentences work best."
             ).format(model=model)


def tabs_by_id(ids: Sequence[str], key: str) -> list:
    """``st.tabs`` labelled ``_(id)`` in the session's language, whose open tab lives in the link as its English
    id (``?pos_tab=Real heads``): a link, a lesson step and a class following its teacher name the same tab in
    every language. ``bind="query-params"`` would put the translated label in the link instead.

    Only the open tab's ``.open`` is true: a page draws that one alone."""
    labels = [_(i) for i in ids]
    linked = st.query_params.get(key)
    chosen = labels[ids.index(linked)] if linked in ids else labels[0]
    widget = f"_{key}_label"
    if st.session_state.get(widget) != chosen:   # a new link, a teacher's move, or another language
        st.session_state[widget] = chosen

    def moved() -> None:
        picked = ids[labels.index(st.session_state[widget])]
        if picked == ids[0]:
            params.drop(key)
        else:
            params.put(key, picked)

    return st.tabs(labels, key=widget, on_change=moved)


def three_scores() -> None:
    """The softmax lab's table of three scores made eight times larger, and what the softmax makes of them: the same
    for everyone, drawn once per server."""
    drawn_once(("three scores",), lambda: (
        st.subheader(_("The same three scores, eight times larger")),
        st.dataframe(numbers.table(real_model.softmax_rows_frame()), hide_index=True),
        st.markdown(_("[8, 16, 24] is [1, 2, 3] times √64: the softmax goes from {small} to {large}, practically "
                      "one-hot.").format(small=format_weights(maths.softmax([1., 2, 3])),
                                         large=format_weights(maths.softmax([8., 16, 24]))))))
