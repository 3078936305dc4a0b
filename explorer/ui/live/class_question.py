"""A predict-then-reveal question asked in a classroom, run as Peer Instruction: each student votes alone (a new
commit replaces the vote), nobody sees any count (the teacher's screen and the projector included) until the teacher
presses "Show answers"; the class may then discuss and vote again, and the reveal shows both rounds side by side with
the right answer. The rounds live in the store (``explorer.classroom.polls``); ``explorer.ui.predict_first.asked``
hands a question here while its session is in a room.
"""
from __future__ import annotations

import hashlib

import streamlit as st

from explorer.classroom import ClassroomError, Progress
from explorer.classroom.polls import answer_text, counts_by_text, vote_of
from explorer.labs.quiz import Question
from explorer.plots.classroom import answer_bars, answer_rounds
from explorer.ui import answer_widgets as aw
from explorer.ui.live import membership, seat, teacher_watch
from explorer.ui.text import literal
from explorer.ui.widgets import show_figure
from explorer.words.i18n import _, ngettext


def _send(key: str, question: Question, widgets: str) -> None:
    given = aw.given(question, widgets)
    if given is None:
        return aw.nothing_typed(key)
    try:
        membership.store().answer(membership.code(), key, membership.student(), vote_of(question.options, given))
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _move(op: str, key: str, round_: int) -> None:
    """The teacher's click: show | again | reveal, for the round the teacher's screen showed."""
    try:
        getattr(membership.store(), op)(membership.code(), membership.teacher_key(), key, round=round_)
    except ClassroomError as err:
        st.session_state[f"{key}_error"] = str(err)


def _chart(question: Question, key: str, poll: Progress) -> None:
    """The counts of the rounds that are closed (never of an open one); the right answer only once revealed.
    The chart is the class's, the same for everyone in the room who reads it in one language: drawn once per
    server for its counts (``show_figure``'s view), not once per student (it was a third of a follower's run)."""
    rounds = [counts_by_text(membership.store().counts(membership.code(), key, round=r), question.options)
              for r in poll.shown_rounds]   # votes are kept by option: each reads in this viewer's language
    right = question.accepted if poll.revealed else None

    def figure():
        if len(rounds) == 1:
            n = sum(rounds[0].values())
            title = (ngettext("Class answers, round 1 ({n} student)", "Class answers, round 1 ({n} students)", n)
                     .format(n=n) if poll.round == 2 else "")
            return answer_bars(question.options, rounds[0], right, title=title, typed=question.typed)
        return answer_rounds(question.options, rounds, right, typed=question.typed)
    view = (question.fingerprint, question.typed, right, poll.round, tuple(tuple(sorted(r.items())) for r in rounds))
    show_figure(figure, f"{key}_class_chart", f"class-answers-{key}", view=view)


def _ask(question: Question, key: str) -> None:
    """Store the question with the room as the teacher's page shows it (for the report), once per version."""
    asked = (membership.code(), question.fingerprint, question.typed)
    if st.session_state.get(f"{key}_asked") == asked:
        return
    try:
        membership.store().ask(membership.code(), membership.teacher_key(), key, question.prompt, question.options,
                               question.correct, question.typed, also=question.also)
    except ClassroomError:   # too long to keep (the report then names the question by its id), or the class ended
        return
    st.session_state[f"{key}_asked"] = asked


def _teacher_side(question: Question, key: str, poll: Progress) -> None:
    """Before "Show answers" the teacher's own screen holds no count: "n of m answered", and only off the
    projector. The server reruns the page when that number moves (``teacher_watch.watch``)."""
    _ask(question, key)
    teacher_watch.watch(key, poll)
    if poll.shown_rounds:
        _chart(question, key, poll)
    if poll.revealed:
        st.success(_("Revealed to the class: the answer is {answer}.").format(answer=aw.right_answers(question)))
        st.markdown(question.reveal)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="medium"):
        if poll.open:
            if membership.projector():
                st.markdown(_("Voting is open. Nobody sees the answers until they are shown."))
            else:
                info = membership.store().room(membership.code())
                st.markdown(ngettext("**{answered} of {students} answered**", "**{answered} of {students} answered**",
                                     poll.answered).format(
                    answered=poll.answered, students=info.students if info else 0))
            st.button(_("Show answers"), key=f"{key}_show", icon=":material/visibility:", type="primary",
                      on_click=_move, args=("show", key, poll.round))
        else:
            st.button(_("Discuss and vote again"), key=f"{key}_again", icon=":material/sync:", type="primary",
                      on_click=_move, args=("again", key, poll.round))
            st.button(_("Reveal the answer"), key=f"{key}_reveal", icon=":material/check_circle:",
                      on_click=_move, args=("reveal", key, poll.round))
    if poll.open and poll.round == 1:
        st.caption(_("Students vote alone. After “Show answers” you may let them discuss and vote again."))
    elif poll.open:
        st.caption(_("Round 2: the class discussed and votes again. “Show answers” then shows both rounds and the "
                     "right answer."))
    else:
        st.caption(_("Round 1's answers are shown; the right answer is not. Let the class discuss and vote again, "
                     "or reveal the answer."))


def class_key(key: str) -> str:
    """The class poll of question ``key`` in this session's room (``poll_key`` at the lesson's place), found by the
    session that draws or replays it, never taken from a recording (a replayed page's parts keep their page's key)."""
    mine = seat.mine()
    return poll_key(key, mine.lesson_place if membership.teacher_key() else mine.lesson_seen)


def poll_key(key: str, place: dict | None) -> str:
    """The class poll of a page's question ``key`` at a lesson's ``place`` (``explorer.lessons.run.place``): the
    poll of the latest step up to this one whose question is that page's own (``page_poll``), so that two such
    steps are two questions (lesson 7's steps 1 and 3 both ask the patching page's, each with its own vote and
    reveal), while the steps after one share its poll (the page still asks what that step asked). The page's key
    outside a lesson, or before any such step."""
    asking = (place or {}).get("page_poll")
    if not isinstance(asking, int) or key == place.get("qid"):
        return key
    digest = hashlib.sha256(str(place.get("source", "")).encode()).hexdigest()[:8]
    return f"{key}-step-{asking + 1}-{digest}"


def class_question(question: Question, key: str) -> tuple[bool | None, bool]:
    key = class_key(key)
    room, me = membership.code(), membership.student()
    try:
        poll = membership.store().progress(room, key)
        mine = {r: answer_text(v, question.options)   # kept by option: read in this student's language
                for r, v in membership.store().my_answers(room, me).get(key, {}).items()} if me else {}
    except ClassroomError as err:
        st.warning(literal(err))
        return None, True   # nothing to wait for: the page is not held back
    with st.container(border=True):
        st.markdown(":material/groups: " + (_("**Class question · round 2.** {prompt}") if poll.round == 2
                                            else _("**Class question.** {prompt}")).format(prompt=question.prompt))
        aw.show_error(key)
        if membership.teacher_key():
            try:
                _teacher_side(question, key, poll)
            except ClassroomError as err:
                st.warning(literal(err))
            return None, poll.revealed
        return _student_side(question, key, poll, mine), poll.revealed


def _student_side(question: Question, key: str, poll: Progress, mine: dict[int, str]) -> bool | None:
    widgets = key if poll.round == 1 else f"{key}_r2"   # round 2 is a fresh vote, with fresh widgets
    vote = mine.get(poll.round)
    if f"{widgets}_answer" not in st.session_state and vote in question.options:
        st.session_state[f"{widgets}_answer"] = vote
    elif f"{widgets}_answer" not in st.session_state and vote and question.typed:   # a word typed earlier
        st.session_state[f"{widgets}_answer"], st.session_state[f"{widgets}_typed"] = _(aw.OTHER), vote
    if poll.round == 2 and 1 in mine:
        st.markdown(_("Your first answer: {said}.").format(said=aw.said(question, mine[1])))
    if poll.shown_rounds and not poll.revealed:
        _chart(question, key, poll)
    answer = aw.answer_widgets(question, widgets, disabled=not poll.open)
    if poll.revealed:
        last = mine.get(2, mine.get(1))
        right = aw.verdict(question, last) if last else None
        if not last:
            st.info(_("You did not answer. The answer is {answer}.").format(answer=aw.right_answers(question)))
            st.markdown(question.reveal)
        _chart(question, key, poll)
        return right
    if not poll.open:
        st.caption(_("Your teacher has shown the class's answers. Wait: you may discuss and vote again."))
        return None
    st.button(_("Commit my answer"), key=f"{key}_commit", disabled=answer is None, on_click=_send,
              args=(key, question, widgets))
    if vote:
        st.caption(_("Your answer is in: {said}. You can change it until the teacher shows the answers.").format(
            said=aw.said(question, vote)))
    elif poll.round == 2:
        st.caption(_("Discuss with your neighbours, then vote again. Nobody sees the answers until the teacher "
                     "shows them."))
    else:
        st.caption(_("Vote on your own: nobody sees the answers until the teacher shows them."))
    return None


def revealed(question: Question, key: str) -> bool:
    """Whether the room has revealed ``key``'s answer (what a page draws after its question depends on it)."""
    try:
        return membership.store().progress(membership.code(), class_key(key)).revealed
    except ClassroomError:
        return True
