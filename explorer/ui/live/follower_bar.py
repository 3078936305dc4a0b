"""A follower's lesson bar (``explorer.ui.live.lesson_bar`` draws it for a session that follows a room): what the
teacher's view says of the running lesson, "step n of N", the step's title and its class question, in this
follower's language where the lesson has one; once the teacher finishes, the follower's own recap.
"""
from __future__ import annotations

import streamlit as st

from explorer.labs.quiz import Question
from explorer.lessons import Lesson
from explorer.lessons.folders import find
from explorer.lessons.pages import STEP_PAGES
from explorer.lessons.run import resume
from explorer.ui import cached, predict_first, prefetch
from explorer.ui.live import membership, report_panel, seat, step_question
from explorer.ui.text import literal
from explorer.words.i18n import _


def in_my_language(where: dict) -> tuple[Lesson, int] | None:
    """The teacher's lesson and step (``where``, the room's view) read again in this follower's language, when the
    lesson is one of the catalogue's or carried whole: the same steps and question ids, the follower's texts."""
    found = resume(where)
    if found is None or found[1] != where.get("step") or len(found[0].steps) != where.get("n"):
        return None
    return found


def bar() -> bool:
    """A follower's lesson bar, read from the room's view: step n of N, its title and its class question (in
    this follower's language where the lesson has one), or a finished lesson's recap. -> whether the page may run."""
    where = seat.mine().lesson_seen
    if isinstance(where, dict) and where.get("ended"):
        source = str(where.get("source", ""))
        mine = find(source) if source.startswith(("app:", "dir:")) else None   # its texts in my language
        report_panel.lesson_recap(mine.title if mine else str(where.get("title", "")),
                                  [str(q) for q in where.get("qids") or []], mine)
        return True
    if not isinstance(where, dict) or not isinstance(where.get("step"), int):
        return True
    prefetch.follow(where)   # on a replica the teacher is not on, the followers' runs start the preparation
    mine = in_my_language(where)
    title = mine[0].steps[mine[1]].title if mine else where.get("step_title", "")
    st.markdown(":material/assignment: " + _("**Step {n} of {total}** · {title}").format(
        n=where["step"] + 1, total=where.get("n", "?"), title=literal(title)))
    if mine:
        step_question.untranslated_note(mine[0])
    raw = where.get("question")
    question = None
    if isinstance(raw, dict) and where.get("qid"):
        try:
            question = Question(raw["prompt"], tuple(raw["options"]), raw["answer"], raw["explain"],
                                also=tuple(raw.get("also") or ()))
        except (KeyError, TypeError, ValueError):
            question = None
    if question is not None and mine and mine[0].lang != where.get("lang", "en"):   # the same question (same id,
        # same options in the same order) in this follower's language
        step = mine[0].steps[mine[1]]
        own = step.question.question() if step.question else cached.lesson_question(*mine) if step.computed else None
        if isinstance(own, Question) and len(own.options) == len(question.options):
            question = own
    page = where.get("page")
    if question is not None and page in STEP_PAGES and membership.current_page() == page:
        # the step's question folds the page, as the teacher's is folded
        return step_question.shown_above(question, str(where["qid"]), False, open_page=where.get("open") is True)
    if question is not None:   # the teacher is on another page than the step's: its question, the page unfolded
        predict_first.asked(question, str(where["qid"]))
    elif isinstance(where.get("note"), str):   # the step's computed question could not be computed
        st.caption(f":material/info: {literal(where['note'])}")
    return True
