"""Streamlit drawing of a predict-then-reveal :class:`explorer.quiz.Question` (pages call this; nothing else).

Inside a classroom the same question becomes a class question: a student's committed answer goes to the room
(a new commit replaces it), the teacher watches the class's answers come in and reveals them; only then does
each student see the right answer and the class's chart.
"""
from __future__ import annotations

import streamlit as st

from explorer.classroom import ClassroomError
from explorer.labs.quiz import Question
from explorer.plots.classroom import answer_bars
from explorer.ui import class_room, classroom
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure


def _commit(key: str, fingerprint: str) -> None:
    st.session_state[f"{key}_committed"] = (st.session_state.get(f"{key}_answer"), fingerprint)


def _retry(key: str) -> None:
    st.session_state.pop(f"{key}_committed", None)
    st.session_state.pop(f"{key}_answer", None)


def predict_then_reveal(question: Question, key: str) -> bool | None:
    """Ask ``question``; reveal the computed answer only after the student commits.

    Returns None before a commit, else whether the committed answer was right. An answer given to an earlier
    version of the question (the controls have moved since) is discarded.
    """
    if class_room.code():
        return _class_question(question, key)
    committed = st.session_state.get(f"{key}_committed")
    if committed is not None and committed[1] != question.fingerprint:
        _retry(key)
        committed = None
    with st.container(border=True):
        st.markdown(f"**Predict, then reveal.** {question.prompt}")
        answer = st.radio("Your prediction", question.options, index=None, key=f"{key}_answer",
                          disabled=committed is not None)
        if committed is None:
            st.button("Commit my answer", key=f"{key}_commit", disabled=answer is None,
                      on_click=_commit, args=(key, question.fingerprint))
            return None
        return _verdict(question, committed[0], retry=key)


def _verdict(question: Question, answer: str, retry: str | None = None) -> bool:
    right = question.check(answer)
    if right:
        st.success(f"Right: {question.correct}.")
    else:
        st.error(f"Not quite: you said {answer}; the computation says {question.correct}.")
    st.markdown(question.reveal)
    if retry:
        st.button("Try again", key=f"{retry}_retry", on_click=_retry, args=(retry,))
    return right


# ---------------------------------------------------------------------------------------------- class questions

def _send(key: str) -> None:
    try:
        class_room.store().answer(class_room.code(), key, class_room.student(), st.session_state[f"{key}_answer"])
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _reveal(key: str) -> None:
    try:
        class_room.store().reveal(class_room.code(), class_room.teacher_key(), key)
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _chart(question: Question, key: str, revealed: bool) -> dict:
    counts = class_room.store().counts(class_room.code(), key)
    show_figure(answer_bars(question.options, counts, question.correct if revealed else None),
                f"{key}_class_chart", f"class-answers-{key}")
    return counts


def _class_question(question: Question, key: str) -> bool | None:
    room, me = class_room.code(), class_room.student()
    try:
        revealed = key in class_room.store().revealed(room)
        mine = class_room.store().my_answer(room, key, me) if me else None
    except ClassroomError as err:
        st.warning(literal(err))
        return None
    with st.container(border=True):
        st.markdown(f":material/groups: **Class question.** {question.prompt}")
        error = st.session_state.pop(f"{key}_error", None)
        if error:
            st.warning(literal(error))
        if class_room.teacher_key():
            if revealed:
                st.success(f"Revealed to the class: the answer is {question.correct}.")
                st.markdown(question.reveal)
                _chart(question, key, revealed=True)
            else:
                classroom.watch(key, _chart(question, key, revealed=False))   # rerun when answers come in
                st.button("Reveal to the class", key=f"{key}_reveal", icon=":material/visibility:",
                          on_click=_reveal, args=(key,), type="primary")
            return None
        if f"{key}_answer" not in st.session_state and mine in question.options:
            st.session_state[f"{key}_answer"] = mine
        answer = st.radio("Your prediction", question.options, index=None, key=f"{key}_answer", disabled=revealed)
        if revealed:
            right = _verdict(question, mine) if mine else None
            if not mine:
                st.info(f"You did not answer. The answer is {question.correct}.")
                st.markdown(question.reveal)
            _chart(question, key, revealed=True)
            return right
        st.button("Commit my answer", key=f"{key}_commit", disabled=answer is None, on_click=_send, args=(key,))
        if mine:
            st.caption(f"Your answer is in: {literal(mine)}. You can change it until the teacher reveals the answer.")
        else:
            st.caption("The teacher reveals the answer to the whole class once everyone has answered.")
        return None
