"""The answer widgets every predict-then-reveal question draws, alone (``explorer.ui.predict_first``) or in a class
(``explorer.ui.live.class_question``): the options and "Another word…", the answer they hold, the verdict and the
reveal. Each question keeps its state in Session State under its own key (``<key>_answer``, ``_typed``,
``_committed``, ``_error``).
"""
from __future__ import annotations

import streamlit as st

from explorer.labs.quiz import TYPED_MAX, Question
from explorer.ui.text import literal
from explorer.words import numbers
from explorer.words.i18n import N_, _

OTHER = N_("Another word…")  # the choice that opens a text box, on questions that take typed answers


def choices(question: Question) -> tuple[str, ...]:
    """The options a student picks from: the question's, and "Another word…" where a typed answer is taken."""
    return question.options + ((_(OTHER),) if question.typed else ())


def given(question: Question, key: str) -> str | None:
    """The answer the widgets hold: the option chosen, or the word typed (as the option it names, if any)."""
    answer = st.session_state.get(f"{key}_answer")
    return question.resolve(st.session_state.get(f"{key}_typed")) if answer == _(OTHER) else answer


def answer_widgets(question: Question, key: str, disabled: bool) -> str | None:
    """The options as a radio, plus a text box when the student picks "Another word…"; -> the radio's value."""
    answer = st.radio(_("Your prediction"), choices(question), index=None, key=f"{key}_answer", disabled=disabled)
    if answer == _(OTHER):
        st.text_input(_("Your word"), max_chars=TYPED_MAX, key=f"{key}_typed", disabled=disabled,
                      placeholder=_("type the token you expect, e.g. Paris"))
    return answer


def nothing_typed(key: str) -> None:
    """Keep the sentence ``show_error`` shows when "Another word…" was picked but nothing typed."""
    st.session_state[f"{key}_error"] = _("Type a word first (or pick one of the options).")


def retry(key: str) -> None:
    """Forget this session's answer to question ``key``: its widgets start empty again."""
    for part in ("committed", "answer", "typed"):
        st.session_state.pop(f"{key}_{part}", None)


def said(question: Question, answer: str) -> str:
    """An answer for markdown: an option as it is, a typed word as literal text."""
    return literal(answer) if answer in question.options else f"“{literal(answer)}”"


def right_answers(question: Question) -> str:
    """The right answer, or on a near-tie every answer the page treats as right, joined ("L1H0, L1H1")."""
    return numbers.joined(question.accepted)


def verdict(question: Question, answer: str, again: str | None = None) -> bool:
    """Say whether ``answer`` is right and show the reveal (with "Try again" for question ``again``); -> right."""
    right = question.check(answer)
    if right and question.also:
        st.success(_("Right: {answer}. Every one of these counts as right: {answers}.").format(
            answer=said(question, answer), answers=right_answers(question)))
    elif right:
        st.success(_("Right: {answer}.").format(answer=question.correct))
    else:
        st.error(_("Not quite: you said {said}; the computation says {answer}.").format(
            said=said(question, answer), answer=right_answers(question)))
    st.markdown(question.reveal)
    if again:
        st.button(_("Try again"), key=f"{again}_retry", on_click=retry, args=(again,))
    return right


def show_error(key: str) -> None:
    """Show (once) what went wrong with the last answer to question ``key``."""
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(literal(error))
