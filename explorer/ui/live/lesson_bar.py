"""Running a lesson: the lesson bar above every page (app.py draws it before the page runs).

The teacher's bar: step n of N, time used against time planned, Back and Next, the step's class question and the
teacher's private notes (never in projector view). Next and Back open the step's page with its parameters, as a
fresh deep link would; in a class the page, its parameters and the lesson's place (``explorer.lessons.run.place``)
are then published together as the room's view (``following.publish``), so the class follows and the store keeps
the step. A follower's bar (``explorer.ui.live.follower_bar``): "step n of N", the step's title and its class
question, read from that view; the step's question above the page is ``explorer.ui.live.step_question``. A teacher
who comes back to a class (the teacher link, a server restart) finds the lesson where the store says it is.
Without a class the same bar runs a lesson alone. When the teacher finishes the lesson, each follower's bar shows
the recap of their own answers to the lesson's questions and the right ones, without leaving the class.

A step's own question is asked before its page answers it: the page stays folded (not run: ``Folded``, its title
and the class's banner, stands in for it) until the question is answered here (committed or shown without a
prediction; in a class, revealed by the teacher, on the teacher's screen and every follower's alike; in a homework,
voted).
"""
from __future__ import annotations

import time

import streamlit as st

from explorer.classroom import ClassroomError, TeacherView
from explorer.labs.quiz import Question
from explorer.lessons import Lesson
from explorer.lessons.computed import opens_page
from explorer.lessons.folders import find
from explorer.lessons.pages import STEP_PAGES
from explorer.lessons.run import ended, place, resume
from explorer.ui import cached, params, predict_first, prefetch
from explorer.ui.language import KEY
from explorer.ui.live import class_banner, follower_bar, homework_panel, membership, seat, step_question
from explorer.ui.text import literal
from explorer.words import numbers
from explorer.words.i18n import _, current

LESSON, STEP, STARTED, STEP_STARTED, GO, RESUMED = (
    "_lesson", "_lesson_step", "_lesson_started", "_lesson_step_started", "_lesson_go", "_lesson_resumed")
ENDED, ASKED_BEFORE = "_lesson_ended", "_lesson_asked_before"   # a finished lesson's recap; questions before it
READ_IN = "_lesson_read_in"   # the language the running lesson was last looked up in (``_in_session_language``)


def running() -> tuple[Lesson, int] | None:
    lesson = st.session_state.get(LESSON)
    if not isinstance(lesson, Lesson):
        return None
    return _in_session_language(lesson), st.session_state.get(STEP, 0)


def _in_session_language(lesson: Lesson) -> Lesson:
    """The running lesson in the session's language: a teacher who switches the language menu mid-lesson gets the
    lesson's own texts (title, steps, questions, notes) in it, as the interface; the same steps and question ids.
    Looked up once per language change (a lesson without a translation stays English)."""
    lang = current()
    if lesson.lang == lang or st.session_state.get(READ_IN) == lang or not lesson.source.startswith(("app:", "dir:")):
        return lesson
    st.session_state[READ_IN] = lang
    mine = find(lesson.source)
    n = len(lesson.steps)
    if mine is None or len(mine.steps) != n or list(map(mine.question_id, range(n))) != list(
            map(lesson.question_id, range(n))):
        return lesson
    st.session_state[LESSON] = mine
    return mine


def start(lesson: Lesson, with_class: bool, step: int = 0) -> None:
    """Callback: run ``lesson`` from step ``step`` (its first, unless a homework goes on where the student was),
    in a new class (``with_class``, unless this session already teaches one) or alone. The run that follows opens
    that step."""
    if with_class and not membership.teacher_key():
        try:
            membership.start_class()
        except ClassroomError as err:
            membership.note(str(err))
            return
    now = time.time()
    st.session_state.pop(ENDED, None)
    st.session_state.update({LESSON: lesson, STEP: step, STARTED: now, STEP_STARTED: now, GO: True, RESUMED: True,
                             ASKED_BEFORE: _asked_so_far()})


def _asked_so_far() -> list[str]:
    """The ids of the class questions the room has asked so far, in order (none without a class)."""
    if not membership.teacher_key():
        return []
    try:
        return [q.qid for q in membership.store().questions(membership.code())]
    except ClassroomError:
        return []


def _move(by: int) -> None:
    now = running()
    if now is None:
        return
    lesson, index = now
    target = min(max(index + by, 0), len(lesson.steps) - 1)
    st.session_state.update({STEP: target, STEP_STARTED: time.time(), GO: True})


def _back_to_step() -> None:
    st.session_state[GO] = True


def finish() -> None:
    """Callback: the lesson ends. A class stays open, and its view carries the lesson's end instead of a step
    (``run.ended``: every follower sees the recap of their own answers) until the teacher closes the recap or
    starts another lesson."""
    now = running()
    if now is not None and membership.teacher_key():
        before = set(st.session_state.get(ASKED_BEFORE, []))   # a teacher back after a restart: none known
        qids = [qid for qid in _asked_so_far() if qid not in before]
        st.session_state[ENDED] = ended(now[0], qids)
    if now is not None:
        homework_panel.finish(now[1])
    for name in (LESSON, STEP, STARTED, STEP_STARTED, GO, ASKED_BEFORE):
        st.session_state.pop(name, None)
    seat.mine().lesson_place = None
    st.session_state[RESUMED] = True   # the room's view still names the lesson until this run publishes


def _open_step(lesson: Lesson, index: int) -> None:
    """Open step ``index``'s page as its deep link would open it: the page's own parameters are forgotten in this
    session (each then reads the step's value from the address, or its default), and the page is switched to."""
    step = lesson.steps[index]
    for name in STEP_PAGES[step.page].params:
        st.session_state.pop(name, None)
        st.session_state.pop(params.kept(name), None)
    kept = {KEY: st.query_params[KEY]} if KEY in st.query_params else {}   # the language the link chose stays
    st.switch_page(step.page, query_params={**step.params, **kept})


def _resume() -> None:
    """A teacher back in a class whose view carries a lesson (a teacher link opened again, a server restart) but
    whose session holds none: carry on at the store's step, once a session."""
    if st.session_state.get(RESUMED) or LESSON in st.session_state or not membership.teacher_key():
        return
    st.session_state[RESUMED] = True
    try:
        where = TeacherView.from_json(membership.store().view(membership.code())[1]).lesson
    except ClassroomError:
        return
    found = resume(where)
    if found is not None:
        lesson, index = found
        st.session_state.update({LESSON: lesson, STEP: index, STARTED: float(where.get("started") or time.time()),
                                 STEP_STARTED: float(where.get("step_started") or time.time())})


def bar() -> bool:
    """The lesson bar for this session: the teacher's (or a lone runner's), a follower's, or nothing. -> whether the
    page may run: False while the step's question folds it (app.py then runs ``Folded`` in its place)."""
    st.session_state.pop(step_question.HELD, None)   # held open only by this run's step question, on its page
    if membership.is_following():
        return follower_bar.bar()
    _resume()
    now = running()
    if now is None:
        _ended_bar()
        return True
    lesson, index = now
    seat.mine().lesson_place = place(lesson, index, st.session_state[STARTED], st.session_state[STEP_STARTED])
    if st.session_state.pop(GO, False):
        homework_panel.record(index)   # a homework keeps the student's furthest step
        _open_step(lesson, index)
    asked = cached.lesson_question(lesson, index) if lesson.steps[index].computed else None
    if asked is not None:   # the class sees the question as computed here (or the sentence shown instead)
        seat.mine().lesson_place = place(lesson, index, st.session_state[STARTED], st.session_state[STEP_STARTED],
                                         asked)
    shown = _teacher_bar(lesson, index, asked)
    prefetch.next_step(lesson, index)   # while the class is here, the server prepares the next step
    return shown


def _close_recap() -> None:
    st.session_state.pop(ENDED, None)


def _ended_bar() -> None:
    """A teacher whose lesson just ended: the class's view carries the end (each follower sees their recap) until
    the recap is closed."""
    finished = st.session_state.get(ENDED) if membership.teacher_key() else None
    if not finished:
        seat.mine().lesson_place = None
        homework_panel.ended_note()
        return
    seat.mine().lesson_place = finished
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="small", key="lesson_ended"):
        st.markdown(":material/flag: " + _("**{title}** is finished: each student now sees their own answers and "
                                           "the right ones.").format(title=literal(finished["title"])))
        st.button(_("Close the recap"), icon=":material/close:", key="_lesson_close_recap", on_click=_close_recap)


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _teacher_bar(lesson: Lesson, index: int, asked: Question | str | None) -> bool:
    step, n = lesson.steps[index], len(lesson.steps)
    used = time.time() - st.session_state[STARTED]
    planned = lesson.planned_until(index)
    on_step = membership.current_page() == step.page
    with st.container(border=True, key="lesson_bar"):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.markdown(":material/assignment: " + _("**{lesson}** · step **{n} of {total}**: {step}").format(
                lesson=literal(lesson.title), n=index + 1, total=n, step=literal(step.title)))
            st.button(_("Back"), icon=":material/chevron_left:", key="_lesson_back", on_click=_move, args=(-1,),
                      disabled=index == 0)
            if index + 1 < n:
                st.button(_("Next"), icon=":material/chevron_right:", key="_lesson_next", on_click=_move, args=(1,),
                          type="primary")
            else:
                st.button(_("Finish the lesson"), icon=":material/flag:", key="_lesson_finish", on_click=finish,
                          type="primary")
        late = used / 60 > planned
        st.caption(":material/timer: " + (
            _("{used} used of {minutes} min planned · by the end of this step: {planned} min · running late") if late
            else _("{used} used of {minutes} min planned · by the end of this step: {planned} min")).format(
            used=_clock(used), minutes=numbers.number(lesson.minutes), planned=numbers.number(planned)))
        step_question.untranslated_note(lesson)
        homework_panel.bar_line()
        if not on_step:
            st.button(_("Back to step {n}").format(n=index + 1), icon=":material/undo:", key="_lesson_return",
                      on_click=_back_to_step)
        notes = st.container() if on_step and not membership.projector() and not homework_panel.mine() else None
    if not on_step:
        return True
    shown = step_question.shown_above(step.question.question() if step.question else asked, lesson.question_id(index),
                                      step.page_question, open_page=opens_page(step))
    # alone, the notes (which may hold the answer) wait for it: the step's question, or the page's own, answered
    answered = shown and (not step.page_question or predict_first.answered_here(STEP_PAGES[step.page].quiz)) and (
        not opens_page(step) or step_question.unfolded(lesson.question_id(index)))   # a question held open: answered
    if notes is not None and (answered or membership.code()):   # never on a student's screen
        with notes:
            _notes(lesson, index)
    return shown


def _notes(lesson: Lesson, index: int) -> None:
    """The teacher's notes (they may hold the answer: a lesson run alone shows them once the step's question is
    answered) and any claim of the lesson the model on screen does not show."""
    step = lesson.steps[index]
    if step.notes:
        with st.expander(_("Your notes (only on this screen, never in projector view)"), icon=":material/notes:"):
            st.markdown(literal(step.notes))
    contradicted = cached.lesson_contradiction(lesson, index)
    if contradicted:   # a claim of the lesson that the model on screen does not show
        st.warning(literal(contradicted), icon=":material/rule:")


class Folded:
    """What app.py runs in place of a step's page while the step's question folds it: the room's poll and banner
    (``class_banner.on_page``, which every page calls first) and the page's title."""

    def __init__(self, page):
        self.page = page   # app.py's st.Page

    def run(self) -> None:
        class_banner.on_page()
        st.title(self.page.title)
