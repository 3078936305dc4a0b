"""The class's report on the Classroom page: the teacher's downloads (CSV and a printable summary) with an on-page
summary that shows no round before its answers are shown, and each student's recap of their own answers. Nothing
is kept after the class ends; both views say so."""
from __future__ import annotations

import time
from dataclasses import replace

import pandas as pd
import streamlit as st

from explorer.classroom import ClassroomError, pretty_code
from explorer.classroom import report as class_report
from explorer.classroom.polls import Asked, answer_text
from explorer.lessons import Lesson
from explorer.ui.live import membership
from explorer.ui.text import literal
from explorer.words import numbers
from explorer.words.i18n import N_, _
from explorer.words.numbers import joined

KEPT = N_("Nothing is kept after the class ends: **End the class** deletes the room with every answer. Download "
          "the report first if you want to keep it.")
COLUMNS = ("#", N_("question"), N_("right answer"), N_("round 1"), N_("round 2"), N_("shift"))


def _hidden(report: class_report.QuestionReport, round_: int) -> bool:
    """This round's counts are not shown yet (still open): the page must not tell them."""
    return round_ not in report.asked.progress.shown_rounds and round_ <= len(report.rounds)


def summary_frame(reports: list[class_report.QuestionReport]) -> pd.DataFrame:
    """The on-page summary: a round still open reads "hidden until shown", the right answer shows once revealed.
    Its columns are named in the reader's language."""
    rows = []
    for i, r in enumerate(reports, 1):
        cells = [_("hidden until shown") if _hidden(r, k) else class_report.round_line(r, k) for k in (1, 2)]
        revealed = r.asked.progress.revealed
        rows.append([i, r.asked.prompt, (joined(r.asked.rights) or "–") if revealed else _("at the reveal"), cells[0],
                     cells[1], class_report.points(r.shift) if revealed else "–"])
    return pd.DataFrame(rows, columns=[_(c) for c in COLUMNS])


def teacher() -> None:
    """The teacher's report: download the CSV or the printable summary at any time, and a summary on the page."""
    room, key = membership.code(), membership.teacher_key()
    try:
        reports = class_report.collect(membership.store(), room, key)
        sentences = class_report.collect_sentences(membership.store(), room, key)
    except ClassroomError:   # the class ended meanwhile: the next run says so
        return
    st.subheader(_("Report"), anchor=False)
    st.markdown(_(KEPT))
    stamp = time.strftime("%Y-%m-%d %H:%M")
    name = f"class-{pretty_code(room)}-{time.strftime('%Y%m%d-%H%M')}"
    with st.container(horizontal=True, gap="small"):
        csv_bytes = class_report.csv_text(reports, sentences).encode("utf-8")
        st.download_button(_("Votes as CSV"), csv_bytes, file_name=f"{name}.csv", mime="text/csv",
                           key="_class_report_csv", icon=":material/download:")
        st.download_button(_("Printable summary"), class_report.summary_html(reports, room=pretty_code(room),
                                                                           when=stamp).encode("utf-8"),
                           file_name=f"{name}.html", mime="text/html", key="_class_report_html",
                           icon=":material/print:")
    if not reports:
        st.caption(_("No class question yet: a question your class answers on a page appears here."))
        return
    st.caption(_("The downloads hold every round, open ones included; this summary shows a round only once its "
                 "answers are shown. The shift is the share right in round 2 minus round 1, in percentage points."))
    st.dataframe(numbers.table(summary_frame(reports)), hide_index=True, key="_class_report_table", column_config={
        "#": st.column_config.NumberColumn(width=40), _("question"): st.column_config.TextColumn(width="large"),
        _("shift"): st.column_config.TextColumn(width=90)})


def student() -> None:
    """A student's recap: each question with their own answers; the right answer once the teacher revealed it."""
    room, me = membership.code(), membership.student()
    try:
        questions = membership.store().questions(room)
        mine = membership.store().my_answers(room, me)
    except ClassroomError:
        return
    st.subheader(_("Your answers"), anchor=False)
    if not questions:
        st.caption(_("The class has answered no question yet."))
    for i, q in enumerate(questions, 1):
        said = {r: answer_text(v, q.options) for r, v in mine.get(q.qid, {}).items()}
        rounds = _rounds(said)
        if q.progress.revealed and q.correct is not None:
            last = said.get(2, said.get(1))
            after = (_("The answer is {answer}.") if last is None else _("The answer is {answer}: you were right.")
                     if last in q.rights else _("The answer is {answer}: not quite.")).format(
                answer=literal(joined(q.rights)))
        else:
            after = _("The answer comes when your teacher reveals it.")
        st.markdown(f"{i}. {literal(q.prompt)}  \n{rounds}. {after}")
    st.caption(_("Nothing is kept after the class ends: your answers go with the room."))


def _rounds(said: dict[int, str]) -> str:
    """"round 1: a · round 2: b", or that the student did not answer."""
    return (" · ".join(_("round {n}: {said}").format(n=r, said=literal(said[r])) for r in sorted(said))
            or _("you did not answer"))


def _in_my_language(questions: list[Asked], lesson: Lesson | None) -> list[Asked]:
    """The room's questions (stored as the teacher's page showed them, in the teacher's language) with the texts of
    ``lesson`` (the same lesson in this student's language) where it asks the same question: same id, as many
    options."""
    if lesson is None:
        return questions
    mine = {lesson.question_id(i): step.question for i, step in enumerate(lesson.steps) if step.question}
    out = []
    for q in questions:
        own = mine.get(q.qid)
        fits = own is not None and len(own.options) == len(q.options)
        out.append(replace(q, prompt=own.prompt, options=own.options, correct=None if q.correct is None else
                           own.answer) if fits else q)
    return out


def lesson_recap(title: str, qids: list[str], lesson: Lesson | None = None) -> None:
    """A follower's recap when the teacher finishes a lesson: each of the lesson's questions (``qids``) with the
    student's own answers and the right answer, in the lesson bar's place (the student stays in the class).
    ``lesson``: the lesson in this student's language, whose texts the recap then shows."""
    room, me = membership.code(), membership.student()
    try:
        questions = _in_my_language(membership.store().questions(room), lesson)
        lines = class_report.recap(questions, membership.store().my_answers(room, me), qids)
    except ClassroomError:
        return
    with st.container(border=True, key="lesson_recap"):
        st.markdown(":material/flag: " + _("**{title}** is over. Your answers:").format(title=literal(title)))
        if not lines:
            st.caption(_("This lesson asked the class no question."))
        for i, line in enumerate(lines, 1):
            rounds = _rounds(line.said)
            right = ("" if line.correct is None else " " + (
                _("The right answer: **{answer}**; you had it.") if line.right
                else _("The right answer: **{answer}**.")).format(answer=literal(joined((line.correct, *line.also)))))
            st.markdown(f"{i}. {literal(line.prompt)}  \n{rounds}.{right}")
