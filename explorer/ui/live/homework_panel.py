"""Homework in the app: the teacher sets a lesson as homework (a link and a code) and follows how many started and
finished, with the same report as a live class; each student runs the lesson alone in their own session (the
lesson bar's "Run it alone"), votes once on each question and sees its answer right after. The store keeps it all
(``explorer.classroom.homework``), so a reload, a second device (the student's own link carries their id) or a
server restart carries on where the student was; when the teacher ends it, every page says so."""
from __future__ import annotations

import secrets
import time

import streamlit as st

from explorer.classroom import ClassroomError, NoSuchRoom, normalise_code, pretty_code
from explorer.classroom import report as class_report
from explorer.classroom.homework import HomeworkInfo
from explorer.classroom.polls import answer_text, vote_of
from explorer.labs.quiz import Question
from explorer.lessons import Lesson
from explorer.sitemap import table
from explorer.ui import cached, language, params
from explorer.ui.live import homework_sentences, membership
from explorer.ui.text import literal
from explorer.words.i18n import _

MINE, SET, ENDED, DONE = "_hw", "_hw_set", "_hw_ended", "_hw_done"   # the student's; the teacher's; notes
URL_CODE, URL_ME, URL_TEACHER = membership.URL_HOMEWORK, "me", "teacher"
PAGE = table.LESSONS.file


# ---------------------------------------------------------------------------------------------- teacher

def questions_of(lesson: Lesson) -> list[tuple[str, str, tuple[str, ...], str, tuple[str, ...]]]:
    """(question id, prompt, options, right answer, the other right answers) of every step that asks a question of
    the lesson's own (written, or computed on its model: the students' sessions compute the same); a page's own
    question is asked on the page and stays out of the report."""
    found = []
    for i, step in enumerate(lesson.steps):
        asked = step.question.question() if step.question else cached.lesson_question(lesson, i) \
            if step.computed else None
        if isinstance(asked, Question):
            found.append((lesson.question_id(i), asked.prompt, asked.options, asked.correct, asked.also))
    return found


def set_homework(lesson: Lesson, prompt_key: str | None = None) -> None:
    """Callback: store the lesson as a new homework, asking each student for a sentence when the text box
    ``prompt_key`` holds what it should be about; its link and code appear under the lesson."""
    prompt = str(st.session_state.get(prompt_key, "") or "") if prompt_key else ""
    try:
        code, key = membership.store().set_homework(lesson.source, lesson.title, questions_of(lesson),
                                                    steps=len(lesson.steps), sentence_prompt=prompt)
    except ClassroomError as err:
        membership.note(str(err))
        return
    st.session_state.setdefault(SET, {})[code] = key


def student_url(code: str, me: str | None = None) -> str:
    return language.with_lang(f"{membership.app_url()}/lessons?{URL_CODE}={code}"
                              + (f"&{URL_ME}={me}" if me else ""))


def teacher_url(code: str, key: str) -> str:
    return f"{student_url(code)}&{URL_TEACHER}={key}"


def set_by_me() -> dict[str, str]:
    """code -> teacher key of the homework this session set (or opened with its teacher link)."""
    return st.session_state.get(SET, {})


def end(code: str) -> None:
    """Callback: end the homework: the room goes with every answer."""
    try:
        membership.store().close(code, set_by_me()[code])
    except ClassroomError as err:
        membership.note(str(err))
    set_by_me().pop(code, None)


def teacher_panel(code: str, key: str) -> None:
    """A homework the teacher set: its link and code, who started and finished, the report, End."""
    store = membership.store()
    try:
        info = store.homework(code)
        progress = store.homework_progress(code, key)
        reports = class_report.collect(store, code, key)
        sentences = class_report.collect_sentences(store, code, key)
    except ClassroomError as err:
        st.caption(literal(str(err)))
        return
    with st.container(border=True, key=f"_hw_panel_{code}"):
        st.markdown(":material/home_work: " + _("**Homework: {title}** · code **{code}** · {started} started, "
                                                "{finished} finished").format(
            title=literal(info.title), code=pretty_code(code), started=progress.started, finished=progress.finished))
        st.code(student_url(code), language=None)
        st.caption(_("Students open this link (or type the code on the Lessons page), each alone, at their own "
                     "pace. Your own link, to come back to this panel (keep it private):"))
        st.code(teacher_url(code, key), language=None)
        homework_sentences.teacher(code, key)
        name = f"homework-{pretty_code(code)}-{time.strftime('%Y%m%d-%H%M')}"
        summary = class_report.summary_html(reports, room=pretty_code(code), when=time.strftime("%Y-%m-%d %H:%M"),
                                            progress=progress, sentences=sentences)
        with st.container(horizontal=True, gap="small"):
            st.download_button(_("Votes as CSV"), class_report.csv_text(reports, sentences).encode("utf-8"),
                               file_name=f"{name}.csv", mime="text/csv", key=f"_hw_csv_{code}",
                               icon=":material/download:")
            st.download_button(_("Printable summary"), summary.encode("utf-8"), file_name=f"{name}-summary.html",
                               mime="text/html", key=f"_hw_html_{code}", icon=":material/print:")
            st.button(_("End the homework"), key=f"_hw_end_{code}", icon=":material/stop_circle:", on_click=end,
                      args=(code,), help=_("Deletes the homework with every answer: download the report first."))


# ---------------------------------------------------------------------------------------------- student

def mine() -> dict | None:
    """The student's running homework: {"code", "me", "title"}, or None."""
    return st.session_state.get(MINE)


def from_url() -> tuple[str | None, str | None, str | None]:
    """(code as typed, student id, teacher key) from the address (``?homework=…&me=…`` / ``&teacher=…``)."""
    query = st.query_params
    return query.get(URL_CODE), query.get(URL_ME), query.get(URL_TEACHER)


def normalised(typed: str) -> str | None:
    """The code as the store keeps it, or None for a garbled one."""
    try:
        return normalise_code(typed)
    except ClassroomError:
        return None


def open_code(typed: str) -> HomeworkInfo:
    """The homework a code opens; ClassroomError with the sentence to show (garbled, ended, a live class's). Wrong
    codes are slowed as the Classroom page's joins are (``membership.guarded``)."""
    info = membership.guarded(typed, membership.store().homework)
    if info is None:
        raise ClassroomError(_("This code is for a live class, not homework: join it on the Classroom page."))
    return info


def join(info: HomeworkInfo, nickname: str, me: str | None) -> int:
    """Join the homework as the student ``me`` (a new id when None) -> the step to start at (their furthest)."""
    store = membership.store()
    me = me or secrets.token_urlsafe(12)
    back = store.joined(info.code, me)   # the same student on another device, or after a restart
    if nickname.strip() or not back:     # a student coming back keeps their nickname unless they type a new one
        store.join(info.code, me, nickname.strip() or membership.NO_NICKNAME, address=membership.client_address())
    step, _ = store.homework_place(info.code, me)
    st.session_state[MINE] = {"code": info.code, "me": me, "title": info.title}
    st.session_state.pop(ENDED, None)
    st.session_state.pop(DONE, None)
    return min(step, info.steps - 1)


def adopt_teacher_link(code: str, key: str) -> None:
    """A teacher link: the panel of that homework in this session, the key out of the address bar."""
    params.drop(URL_TEACHER)
    try:
        if membership.store().is_teacher(normalise_code(code), key):
            st.session_state.setdefault(SET, {})[normalise_code(code)] = key
            return
    except ClassroomError:
        pass
    membership.note(_("This teacher link does not open a homework: it may have ended."))


def _ended(err: ClassroomError) -> None:
    """The homework is gone: say so once; the lesson carries on alone, its answers no longer kept."""
    st.session_state[ENDED] = str(err)
    st.session_state.pop(MINE, None)


def record(step: int, finished: bool = False) -> None:
    """Keep the student's place (each step opened, the lesson finished)."""
    now = mine()
    if now is None:
        return
    try:
        membership.store().homework_step(now["code"], now["me"], step, finished)
    except NoSuchRoom as err:
        _ended(err)
    except ClassroomError:
        pass


def finish(step: int) -> None:
    """The student finished the lesson: kept as finished, and the homework leaves this session."""
    if mine() is None:
        return
    record(step, finished=True)
    if mine() is not None:
        st.session_state[DONE] = _("You finished the homework “{title}”: your answers are with your teacher.").format(
            title=mine()["title"])
        st.session_state.pop(MINE, None)


def ended_note() -> None:
    """The homework's end, or the student's: one line, until the next lesson starts."""
    said, done = st.session_state.get(ENDED), st.session_state.get(DONE)
    if said:
        st.warning(literal(said), icon=":material/event_busy:")
    elif done:
        st.success(literal(done), icon=":material/task_alt:")


def bar_line() -> None:
    """Under the lesson bar: whose homework this is and the student's own link (another device, later)."""
    now = mine()
    if now is None:
        return ended_note()
    st.caption(":material/home_work: " + _("Homework {code}: your answers go to your teacher. To go on later or on "
                                           "another device, keep your own link: {link}").format(
        code=pretty_code(now["code"]), link=student_url(now["code"], now["me"])))
    homework_sentences.student(now["code"], now["me"])


def _vote(qid: str, options: tuple[str, ...]) -> None:
    now, given = mine(), st.session_state.get(f"_hw_{qid}_answer")
    if now is None or given is None:
        return
    try:   # kept by the option's place: the teacher's report counts it whatever language it was cast in
        membership.store().homework_answer(now["code"], qid, now["me"], vote_of(options, given))
    except NoSuchRoom as err:
        _ended(err)
    except ClassroomError as err:   # a second vote (another device), a question this homework does not have
        st.session_state[f"_hw_{qid}_error"] = str(err)


def question(asked: Question, qid: str) -> bool:
    """One round: the student votes alone, then sees their answer beside the right one and why. A vote already
    cast (here, on another device, before a restart) is shown and stays. -> whether it is answered (the step's page
    is folded until then)."""
    now = mine()
    try:
        mine_now = membership.store().my_answer(now["code"], qid, now["me"], round=1)
        mine_now = None if mine_now is None else answer_text(mine_now, asked.options)
    except NoSuchRoom as err:
        _ended(err)
        ended_note()
        return True
    with st.container(border=True, key=f"_hw_q_{qid}"):
        st.markdown(":material/home_work: " + _("**Homework question.** {prompt}").format(prompt=asked.prompt))
        error = st.session_state.pop(f"_hw_{qid}_error", None)
        if error:
            st.warning(literal(error))
        if mine_now is None:
            st.radio(_("Your answer"), asked.options, index=None, key=f"_hw_{qid}_answer")
            st.button(_("Send my answer"), key=f"_hw_{qid}_send", type="primary", on_click=_vote,
                      args=(qid, asked.options))
            return False
        if asked.check(mine_now):
            st.success(_("You said {said}: right.").format(said=literal(mine_now)))
        else:
            st.error(_("You said {said}; the answer is {answer}.").format(said=literal(mine_now), answer=asked.correct))
        st.markdown(asked.reveal)
    return True
