"""A lesson step's question, drawn above its page by the teacher's bar and a follower's alike
(``explorer.ui.live.lesson_bar``, ``explorer.ui.live.follower_bar``): alone, in a class or as homework, it folds
the page until it is answered; and the note that a lesson runs in English where it is not yet translated.

A question the page's own run answers (``open_page``: lesson 6's "will it copy?", "when will the loss drop?") holds
the page open instead: the class votes while the run trains on every screen, and the run is the reveal. The page
then folds only what would say the answer in words, and what is taken apart after training, until the question is
answered (in a class: revealed): it asks :func:`still_open`, drawn as a live part whose state (revealed or not, the
same for the whole room) keys a follower's replayed page.
"""
from __future__ import annotations

import streamlit as st

from explorer.labs.quiz import Question
from explorer.lessons import Lesson
from explorer.lessons.translations import untranslated, untranslated_sentence
from explorer.ui import predict_first
from explorer.ui.live import homework_panel, membership, replayed
from explorer.ui.live.class_question import revealed
from explorer.ui.text import literal
from explorer.words.i18n import _

HELD = "_step_question_held"   # this run's step question held open over its page: (question id, answered here)


def shown_above(question: Question | str | None, qid: str, page_question: bool, open_page: bool = False) -> bool:
    """The step's question, above its page -> whether the page may run (its question answered, or none here; or
    ``open_page``: a question the page's run answers, which never folds the page, see :func:`still_open`)."""
    st.session_state.pop(HELD, None)
    shown = True
    if isinstance(question, Question) and homework_panel.mine():   # one round, this student's vote, the answer after
        shown = homework_panel.question(question, qid)
    elif isinstance(question, Question):
        shown = predict_first.asked(question, qid)[1]
    elif isinstance(question, str):   # a computed question that could not be computed on this model
        st.caption(f":material/info: {literal(question)}")
    elif page_question:
        st.caption(":material/quiz: " + _("This step's question is the page's own: predict, then reveal, below."))
    if isinstance(question, Question) and open_page:
        st.session_state[HELD] = (qid, bool(shown))
        return True
    if not isinstance(question, Question) or shown:
        return True
    predict_first.folded_line(_("The step's page, with its charts and sentences,"),
                              homework=bool(homework_panel.mine()))
    return False


def held_open() -> str | None:
    """The id of the step question this run holds open over its page (None: none, and the page shows all)."""
    held = st.session_state.get(HELD)
    return held[0] if held else None


def unfolded(qid: str) -> bool:
    """Whether the question ``qid`` held open over the page has been answered: in a class, revealed by the teacher
    (read from the room, the same for every follower), else answered in this session."""
    if membership.code() and not homework_panel.mine():
        return revealed(None, qid)
    held = st.session_state.get(HELD)
    return bool(held and held[0] == qid and held[1])


def still_open() -> bool:
    """Called by a page that a step question may hold open: whether that question is still unanswered, so the page
    folds what says its answer. Drawn as a live part (each session reads it; its state keys a replayed page)."""
    qid = held_open()
    return qid is not None and not replayed.live(unfolded, qid, state=unfolded)


def untranslated_note(lesson: Lesson) -> None:
    """A catalogue lesson without a file in the session's language runs in English: say so, once in the bar."""
    if untranslated(lesson):
        st.caption(":material/translate: " + untranslated_sentence())
