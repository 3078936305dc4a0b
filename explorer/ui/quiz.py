"""Streamlit drawing of a predict-then-reveal :class:`explorer.quiz.Question` (pages call this; nothing else)."""
from __future__ import annotations

import streamlit as st

from explorer.labs.quiz import Question


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
        right = question.check(committed[0])
        if right:
            st.success(f"Right: {question.correct}.")
        else:
            st.error(f"Not quite: you said {committed[0]}; the computation says {question.correct}.")
        st.markdown(question.reveal)
        st.button("Try again", key=f"{key}_retry", on_click=_retry, args=(key,))
        return right
