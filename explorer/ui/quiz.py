"""Streamlit drawing of a predict-then-reveal :class:`explorer.labs.quiz.Question` (pages call this; nothing else).

Inside a classroom the same question becomes a class question: a student's committed answer goes to the room
(a new commit replaces it), the teacher watches the class's answers come in and reveals them; only then does
each student see the right answer and the class's chart.
"""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError
from explorer.labs.quiz import TYPED_MAX, Question
from explorer.plots.classroom import answer_bars
from explorer.ui.live import following, membership
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure

OTHER = "Another word…"  # the choice that opens a text box, on questions that take typed answers


def _choices(question: Question) -> tuple[str, ...]:
    return question.options + ((OTHER,) if question.typed else ())


def _given(question: Question, key: str) -> str | None:
    """The answer the widgets hold: the option chosen, or the word typed (as the option it names, if any)."""
    answer = st.session_state.get(f"{key}_answer")
    return question.resolve(st.session_state.get(f"{key}_typed")) if answer == OTHER else answer


def _answer_widgets(question: Question, key: str, disabled: bool) -> str | None:
    """The options as a radio, plus a text box when the student picks "Another word…"; -> the radio's value."""
    answer = st.radio("Your prediction", _choices(question), index=None, key=f"{key}_answer", disabled=disabled)
    if answer == OTHER:
        st.text_input("Your word", max_chars=TYPED_MAX, key=f"{key}_typed", disabled=disabled,
                      placeholder="type the token you expect, e.g. Paris")
    return answer


def _nothing_typed(key: str) -> None:
    st.session_state[f"{key}_error"] = "Type a word first (or pick one of the options)."


def _commit(key: str, question: Question) -> None:
    given = _given(question, key)
    if given is None:
        return _nothing_typed(key)
    st.session_state[f"{key}_committed"] = (given, question.fingerprint)


def _retry(key: str) -> None:
    for part in ("committed", "answer", "typed"):
        st.session_state.pop(f"{key}_{part}", None)


def _said(question: Question, answer: str) -> str:
    """An answer for markdown: an option as it is, a typed word as literal text."""
    return literal(answer) if answer in question.options else f"“{literal(answer)}”"


def predict_then_reveal(question: Question, key: str) -> bool | None:
    """Ask ``question``; reveal the computed answer only after the student commits.

    Returns None before a commit, else whether the committed answer was right. An answer given to an earlier
    version of the question (the controls have moved since) is discarded.
    """
    if membership.code():
        return _class_question(question, key)
    committed = st.session_state.get(f"{key}_committed")
    if committed is not None and committed[1] != question.fingerprint:
        _retry(key)
        committed = None
    with st.container(border=True):
        st.markdown(f"**Predict, then reveal.** {question.prompt}")
        answer = _answer_widgets(question, key, disabled=committed is not None)
        if committed is None:
            _show_error(key)
            st.button("Commit my answer", key=f"{key}_commit", disabled=answer is None,
                      on_click=_commit, args=(key, question))
            return None
        return _verdict(question, committed[0], retry=key)


def _verdict(question: Question, answer: str, retry: str | None = None) -> bool:
    right = question.check(answer)
    if right:
        st.success(f"Right: {question.correct}.")
    else:
        st.error(f"Not quite: you said {_said(question, answer)}; the computation says {question.correct}.")
    st.markdown(question.reveal)
    if retry:
        st.button("Try again", key=f"{retry}_retry", on_click=_retry, args=(retry,))
    return right


# ---------------------------------------------------------------------------------------------- class questions

def _show_error(key: str) -> None:
    error = st.session_state.pop(f"{key}_error", None)
    if error:
        st.warning(literal(error))


def _send(key: str, question: Question) -> None:
    given = _given(question, key)
    if given is None:
        return _nothing_typed(key)
    try:
        membership.store().answer(membership.code(), key, membership.student(), given)
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _reveal(key: str) -> None:
    try:
        membership.store().reveal(membership.code(), membership.teacher_key(), key)
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _chart(question: Question, key: str, revealed: bool) -> dict:
    counts = membership.store().counts(membership.code(), key)
    show_figure(answer_bars(question.options, counts, question.correct if revealed else None, typed=question.typed),
                f"{key}_class_chart", f"class-answers-{key}")
    return counts


def _class_question(question: Question, key: str) -> bool | None:
    room, me = membership.code(), membership.student()
    try:
        revealed = key in membership.store().revealed(room)
        mine = membership.store().my_answer(room, key, me) if me else None
    except ClassroomError as err:
        st.warning(literal(err))
        return None
    with st.container(border=True):
        st.markdown(f":material/groups: **Class question.** {question.prompt}")
        _show_error(key)
        if membership.teacher_key():
            if revealed:
                st.success(f"Revealed to the class: the answer is {question.correct}.")
                st.markdown(question.reveal)
                _chart(question, key, revealed=True)
            else:
                following.watch(key, _chart(question, key, revealed=False))   # rerun when answers come in
                st.button("Reveal to the class", key=f"{key}_reveal", icon=":material/visibility:",
                          on_click=_reveal, args=(key,), type="primary")
            return None
        if f"{key}_answer" not in st.session_state and mine in question.options:
            st.session_state[f"{key}_answer"] = mine
        elif f"{key}_answer" not in st.session_state and mine and question.typed:   # a word typed earlier
            st.session_state[f"{key}_answer"], st.session_state[f"{key}_typed"] = OTHER, mine
        answer = _answer_widgets(question, key, disabled=revealed)
        if revealed:
            right = _verdict(question, mine) if mine else None
            if not mine:
                st.info(f"You did not answer. The answer is {question.correct}.")
                st.markdown(question.reveal)
            _chart(question, key, revealed=True)
            return right
        st.button("Commit my answer", key=f"{key}_commit", disabled=answer is None, on_click=_send,
                  args=(key, question))
        if mine:
            st.caption(f"Your answer is in: {_said(question, mine)}. You can change it until the teacher reveals "
                       "the answer.")
        else:
            st.caption("The teacher reveals the answer to the whole class once everyone has answered.")
        return None
