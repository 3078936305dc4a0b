"""The class's report on the Classroom page: the teacher's downloads (CSV and a printable summary) with an on-page
summary that shows no round before its answers are shown, and each student's recap of their own answers. Nothing
is kept after the class ends; both views say so."""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from explorer.classroom import ClassroomError, pretty_code
from explorer.classroom import report as class_report
from explorer.ui.live import membership
from explorer.ui.text import literal

KEPT = ("Nothing is kept after the class ends: **End the class** deletes the room with every answer. Download the "
        "report first if you want to keep it.")


def _hidden(report: class_report.QuestionReport, round_: int) -> bool:
    """This round's counts are not shown yet (still open): the page must not tell them."""
    return round_ not in report.asked.progress.shown_rounds and round_ <= len(report.rounds)


def summary_frame(reports: list[class_report.QuestionReport]) -> pd.DataFrame:
    """The on-page summary: a round still open reads "hidden until shown", the right answer shows once revealed."""
    rows = []
    for i, r in enumerate(reports, 1):
        cells = ["hidden until shown" if _hidden(r, k) else class_report.round_line(r, k) for k in (1, 2)]
        revealed = r.asked.progress.revealed
        rows.append({"#": i, "question": r.asked.prompt, "right answer": (r.asked.correct or "–") if revealed
                     else "at the reveal", "round 1": cells[0], "round 2": cells[1],
                     "shift": class_report.points(r.shift) if revealed else "–"})
    return pd.DataFrame(rows, columns=["#", "question", "right answer", "round 1", "round 2", "shift"])


def teacher() -> None:
    """The teacher's report: download the CSV or the printable summary at any time, and a summary on the page."""
    room, key = membership.code(), membership.teacher_key()
    try:
        reports = class_report.collect(membership.store(), room, key)
    except ClassroomError:   # the class ended meanwhile: the next run says so
        return
    st.subheader("Report", anchor=False)
    st.markdown(KEPT)
    stamp = time.strftime("%Y-%m-%d %H:%M")
    name = f"class-{pretty_code(room)}-{time.strftime('%Y%m%d-%H%M')}"
    with st.container(horizontal=True, gap="small"):
        st.download_button("Votes as CSV", class_report.csv_text(reports).encode("utf-8"), file_name=f"{name}.csv",
                           mime="text/csv", key="_class_report_csv", icon=":material/download:")
        st.download_button("Printable summary", class_report.summary_html(reports, room=pretty_code(room),
                                                                           when=stamp).encode("utf-8"),
                           file_name=f"{name}.html", mime="text/html", key="_class_report_html",
                           icon=":material/print:")
    if not reports:
        st.caption("No class question yet: a question your class answers on a page appears here.")
        return
    st.caption("The downloads hold every round, open ones included; this summary shows a round only once its "
               "answers are shown. The shift is the share right in round 2 minus round 1, in percentage points.")
    st.dataframe(summary_frame(reports), hide_index=True, key="_class_report_table", column_config={
        "#": st.column_config.NumberColumn(width=40), "question": st.column_config.TextColumn(width="large"),
        "shift": st.column_config.TextColumn(width=90)})


def student() -> None:
    """A student's recap: each question with their own answers; the right answer once the teacher revealed it."""
    room, me = membership.code(), membership.student()
    try:
        questions = membership.store().questions(room)
        mine = membership.store().my_answers(room, me)
    except ClassroomError:
        return
    st.subheader("Your answers", anchor=False)
    if not questions:
        st.caption("The class has answered no question yet.")
    for i, q in enumerate(questions, 1):
        said = mine.get(q.qid, {})
        rounds = " · ".join(f"round {r}: {literal(said[r])}" for r in sorted(said)) or "you did not answer"
        if q.progress.revealed and q.correct is not None:
            last = said.get(2, said.get(1))
            verdict = "" if last is None else ": you were right" if last == q.correct else ": not quite"
            after = f"The answer is {literal(q.correct)}{verdict}."
        else:
            after = "The answer comes when your teacher reveals it."
        st.markdown(f"{i}. {literal(q.prompt)}  \n{rounds}. {after}")
    st.caption("Nothing is kept after the class ends: your answers go with the room.")


def lesson_recap(title: str, qids: list[str]) -> None:
    """A follower's recap when the teacher finishes a lesson: each of the lesson's questions (``qids``) with the
    student's own answers and the right answer, in the lesson bar's place (the student stays in the class)."""
    room, me = membership.code(), membership.student()
    try:
        lines = class_report.recap(membership.store().questions(room), membership.store().my_answers(room, me), qids)
    except ClassroomError:
        return
    with st.container(border=True, key="lesson_recap"):
        st.markdown(f":material/flag: **{literal(title)}** is over. Your answers:")
        if not lines:
            st.caption("This lesson asked the class no question.")
        for i, line in enumerate(lines, 1):
            rounds = (" · ".join(f"round {r}: {literal(line.said[r])}" for r in sorted(line.said))
                      or "you did not answer")
            right = ("" if line.correct is None else f" The right answer: **{literal(line.correct)}**"
                     + ("; you had it." if line.right else "."))
            st.markdown(f"{i}. {literal(line.prompt)}  \n{rounds}.{right}")
