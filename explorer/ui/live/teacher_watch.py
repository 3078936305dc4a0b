"""What the server watches on a teacher's page: the polls of the class questions drawn (the number who voted,
never the counts), the number of students, and on the Classroom page the roster and the class's sentences. The
server reruns the teacher's page when one moves (``push``); no timer in the browser."""
from __future__ import annotations

from explorer.classroom import ClassroomError
from explorer.ui.live import push
from explorer.ui.live.membership import PAGE, code, current_page, store, teacher_key
from explorer.ui.live.seat import mine


def watch(question: str, poll) -> None:
    """The teacher's page shows ``question``'s poll (an ``explorer.classroom.Progress``: round, state and how many
    voted, never the counts): the server reruns the page when it moves, or when a student joins or leaves ("n of m
    answered"; ``after_run`` hands it to ``push``). Entries are only ever replaced, never cleared at the start
    of a run: a run cut short before its quiz drew would otherwise leave nothing to watch."""
    mine().questions[question] = poll


def _teacher_sees(what: tuple) -> tuple | None:
    """``what`` = (room, key, questions, roster?, sentences?) -> each question's poll and the number of students
    now and, when the roster is on screen, who has joined, and when the class's sentences are, each sentence
    (``explorer.classroom.sentences``); None once the class has ended."""
    room, key, questions, roster, sentences = what
    try:
        polls = tuple(store().progress(room, q) for q in questions)
        info = store().room(room) if questions or sentences else None
        return ((polls, info and info.students), (store().roster(room, key) if roster else None),
                (store().sentences(room, key) if sentences else None))
    except ClassroomError:
        return None


def after_run(session: str | None) -> None:
    """A teacher's run (of a real server's session) has drawn its page: the server reruns it when an answer comes
    in, someone joins or leaves the roster on screen, a sentence comes in or changes, or the class ends."""
    if code() and teacher_key() and session is not None and push.served(session):
        _watch_teacher(session)


def _watch_teacher(session: str) -> None:
    seat = mine()
    shown = seat.questions
    drawn, seat.roster_shown = seat.roster_shown, None   # this run's, or one a stopped run on the page left
    written, seat.sentences_shown = seat.sentences_shown, None
    roster = drawn if current_page() == PAGE else None
    sentences = written if current_page() == PAGE else None
    if not shown and roster is None and sentences is None:
        push.forget(session)
        return
    questions = tuple(shown)
    what = (code(), teacher_key(), questions, roster is not None, sentences is not None)
    info = store().room(code()) if questions or sentences is not None else None
    push.watch(session, what, ((tuple(shown[q] for q in questions), info and info.students), roster, sentences),
               _teacher_sees)
