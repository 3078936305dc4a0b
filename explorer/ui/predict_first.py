"""Streamlit drawing of a predict-then-reveal :class:`explorer.labs.quiz.Question` (pages call this; nothing else).

Inside a classroom the same question becomes a class question, run as Peer Instruction
(``explorer.ui.live.class_question``); the widgets both draw are ``explorer.ui.answer_widgets``.

A page asks its question before it draws what answers it (``ask_first``): those parts stay folded, not drawn, until
the student commits a prediction or presses "Show me without predicting" (in a class: until the teacher reveals).
"""
from __future__ import annotations

import streamlit as st

from explorer.labs.quiz import Question
from explorer.ui import answer_widgets as aw
from explorer.ui.live import membership, replayed
from explorer.ui.live.class_question import class_question, revealed
from explorer.words.i18n import _


def _skip(key: str, question: Question) -> None:
    """Shown without a prediction: this and every later version of the question, until "Predict again"."""
    st.session_state[f"{key}_committed"] = (None, question.fingerprint)


def _commit(key: str, question: Question) -> None:
    given = aw.given(question, key)
    if given is None:
        return aw.nothing_typed(key)
    st.session_state[f"{key}_committed"] = (given, question.fingerprint)


def predict_then_reveal(question: Question, key: str) -> bool | None:
    """Ask ``question``; reveal the computed answer only after the student commits.

    Returns None before a commit, else whether the committed answer was right (False when the student chose to see
    it without predicting). An answer given to an earlier version of the question (the controls have moved since)
    is discarded.
    """
    return asked(question, key)[0]


def ask_first(question: Question, key: str, folded: str) -> bool:
    """Ask ``question`` (as :func:`predict_then_reveal`) before the parts of the page that answer it, and say whether
    they may be drawn now: True once the student has committed a prediction or chosen to see them without one (in a
    class: once the teacher has revealed the answer). Before that a line names what stays folded (``folded``, e.g.
    "The measured spread and its charts") and the page draws none of it: ``if ask_first(...): draw the answer``."""
    return asked(question, key)[1] or folded_line(folded)


def folded_line(folded: str, homework: bool = False) -> bool:
    """The line that stands in for what a question folds (``folded``, plural: "The measurements", translated) until
    what opens it: a homework vote sent (``homework``), else a commit here, or the teacher's reveal in a class;
    -> False. One whole sentence for each, for the translators."""
    if homework:
        line = _("{folded} stay folded until you send your answer.")
    elif membership.teacher_key():
        line = _("{folded} stay folded until you reveal the answer.")
    elif membership.code():
        line = _("{folded} stay folded until your teacher reveals the answer.")
    else:
        line = _("{folded} stay folded until you commit a prediction (or choose “Show me without predicting”).")
    st.caption(":material/visibility_off: " + line.format(folded=folded))
    return False


def answered_here(key: str) -> bool:
    """Whether this session, outside a class, has committed a prediction to question ``key`` or chosen to see the
    answer without one (what unfolds an ``ask_first``)."""
    return st.session_state.get(f"{key}_committed") is not None


def asked(question: Question, key: str) -> tuple[bool | None, bool]:
    """Draw ``question`` -> (whether the answer given was right, None before one; whether what answers it may be
    drawn: committed or shown without a prediction, in a class revealed by the teacher)."""
    if membership.code():   # each student's own vote: drawn by each session, also in a replayed page
        return replayed.live(class_question, question, key, state=revealed)   # its poll: class_key, there
    committed = st.session_state.get(f"{key}_committed")
    if committed is not None and committed[0] is not None and committed[1] != question.fingerprint:
        aw.retry(key)   # an answer to an earlier version; "without predicting" holds until the student predicts again
        committed = None
    with st.container(border=True):
        st.markdown(_("**Predict, then reveal.** {prompt}").format(prompt=question.prompt))
        if committed is not None and committed[0] is None:   # shown without a prediction: no options to grey out
            _unanswered(question)
            st.button(_("Predict again"), key=f"{key}_retry", on_click=aw.retry, args=(key,))
            return False, True
        answer = aw.answer_widgets(question, key, disabled=committed is not None)
        if committed is None:
            aw.show_error(key)
            with st.container(horizontal=True, gap="small"):
                st.button(_("Commit my answer"), key=f"{key}_commit", disabled=answer is None,
                          on_click=_commit, args=(key, question))
                st.button(_("Show me without predicting"), key=f"{key}_skip", type="tertiary",
                          on_click=_skip, args=(key, question))
            return None, False
        return aw.verdict(question, committed[0], again=key), True


def _unanswered(question: Question) -> None:
    st.info(_("You did not predict. The answer is {answer}.").format(answer=aw.right_answers(question)))
    st.markdown(question.reveal)
