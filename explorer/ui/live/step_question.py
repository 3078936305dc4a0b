"""A lesson step's question, drawn above its page by the teacher's bar and a follower's alike
(``explorer.ui.live.lesson_bar``, ``explorer.ui.live.follower_bar``): alone, in a class or as homework, it folds
the page until it is answered; and the note that a lesson runs in English where it is not yet translated.
"""
from __future__ import annotations

import streamlit as st

from explorer.labs.quiz import Question
from explorer.lessons import Lesson
from explorer.lessons.translations import untranslated, untranslated_sentence
from explorer.ui import predict_first
from explorer.ui.live import homework_panel
from explorer.ui.text import literal
from explorer.words.i18n import _


def shown_above(question: Question | str | None, qid: str, page_question: bool) -> bool:
    """The step's question, above its page -> whether the page may run (its question answered, or none here)."""
    shown = True
    if isinstance(question, Question) and homework_panel.mine():   # one round, this student's vote, the answer after
        shown = homework_panel.question(question, qid)
    elif isinstance(question, Question):
        shown = predict_first.asked(question, qid)[1]
    elif isinstance(question, str):   # a computed question that could not be computed on this model
        st.caption(f":material/info: {literal(question)}")
    elif page_question:
        st.caption(":material/quiz: " + _("This step's question is the page's own: predict, then reveal, below."))
    if not isinstance(question, Question) or shown:
        return True
    predict_first.folded_line(_("The step's page, with its charts and sentences,"),
                              homework=bool(homework_panel.mine()))
    return False


def untranslated_note(lesson: Lesson) -> None:
    """A catalogue lesson without a file in the session's language runs in English: say so, once in the bar."""
    if untranslated(lesson):
        st.caption(":material/translate: " + untranslated_sentence())
